# The network and pools must exist and be active before any machine is made: the
# precondition below fails the plan with libvirt_cluster's message (which object is
# missing or inactive, and how to start it) instead of a half-made cluster.
data "libvirt_cluster" "this" {
  network     = var.network
  base_pool   = var.base_pool
  domain_pool = var.domain_pool
}

locals {
  names = [for i in range(var.machine_count) : "${var.name_prefix}-${i}"]
}

resource "libvirt_cluster_machine" "this" {
  for_each = toset(local.names)

  namespace     = var.namespace
  name          = each.key
  network       = var.network
  base_pool     = var.base_pool
  domain_pool   = var.domain_pool
  image         = var.image
  vcpu          = var.vcpu
  memory_mib    = var.memory_mib
  disk_gib      = var.disk_gib
  user_data     = var.user_data
  lease_timeout = var.lease_timeout

  lifecycle {
    precondition {
      condition     = data.libvirt_cluster.this.ready
      error_message = "The cluster's infrastructure is not ready (${coalesce(data.libvirt_cluster.this.reason, "unknown")}): ${data.libvirt_cluster.this.message}"
    }
  }
}
