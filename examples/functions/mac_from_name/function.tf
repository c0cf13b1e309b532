# The MAC libvirt_cluster_machine derives for that machine's domain, e.g. to pre-seed
# DHCP or DNS elsewhere before the machine exists.
output "worker_mac" {
  value = provider::libvirt::mac_from_name(
    provider::libvirt::cluster_machine_name("default", "worker-0")
  )
}
