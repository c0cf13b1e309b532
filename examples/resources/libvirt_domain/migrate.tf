# A domain that moves between the provider's hosts (see examples/provider/provider-hosts.tf):
# change `host` and the running domain migrates live to the new host, its disk copied
# there, instead of being destroyed and made again. The plan shows an in-place update with
# update_method = "migrate" and a warning naming both hosts.
resource "libvirt_domain" "app" {
  host       = "kvm2" # was "default"
  name       = "app-1"
  vcpu       = 2
  memory_mib = 2048

  migrate = true
  migration = {
    copy_storage  = "all"   # the disk is copied; "none" (default): storage both hosts see
    bandwidth_mib = 100     # MiB/s
    timeout       = "15m"   # then on_timeout
    on_timeout    = "abort" # the domain keeps running on the old host, the apply fails
  }

  # Copied by the migration into the same path on kvm2, whose pool must hold that path.
  # Read-only media (a cloud-init seed) the new host lacks are copied ahead by the provider.
  # A disk of a libvirt_volume: give the volume the same host, and it moves with the domain.
  disk {
    path = "/var/lib/libvirt/images/app-1.qcow2"
  }

  network_interface {
    bridge = "br0" # the same LAN on both hosts: the guest keeps its address
  }
}
