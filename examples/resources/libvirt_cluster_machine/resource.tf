# One Cluster API style machine: a copy-on-write overlay of the base image, a cloud-init
# seed (instance-id = uid, local-hostname = name, user-data = the bootstrap data), a DHCP
# reservation and a domain, all named by fixed rules. The plan shows the domain name and
# MAC before anything is made (the same values as provider::libvirt::cluster_machine_name
# and mac_from_name).
resource "libvirt_cluster_machine" "worker" {
  namespace   = "prod"
  name        = "worker-0"
  network     = "default"
  base_pool   = "images"
  domain_pool = "default"
  image       = "debian-12-genericcloud-amd64.qcow2"

  vcpu       = 2    # growth up to max_vcpu (2x at create) is live
  memory_mib = 4096 # changes up to max_memory_mib (2x at create) are live
  disk_gib   = 40   # grows online; cannot shrink

  user_data = <<-EOT
    #!/bin/sh
    # the bootstrap data, e.g. the kubeadm join command of the cluster
  EOT

  timeouts {
    create = "15m"
  }
}

output "worker" {
  value = {
    domain      = libvirt_cluster_machine.worker.domain_name # prod-worker-0-8354d9
    provider_id = libvirt_cluster_machine.worker.provider_id # libvirt://<uid>
    ip          = libvirt_cluster_machine.worker.ip          # the reserved address
  }
}
