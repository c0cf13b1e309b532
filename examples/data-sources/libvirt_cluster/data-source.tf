data "libvirt_cluster" "this" {
  network     = "default"
  base_pool   = "images"
  domain_pool = "default"
}

# Fail the plan with the reason when the host is not ready for the cluster's machines.
check "cluster_infrastructure" {
  assert {
    condition     = data.libvirt_cluster.this.ready
    error_message = "${data.libvirt_cluster.this.reason}: ${data.libvirt_cluster.this.message}"
  }
}
