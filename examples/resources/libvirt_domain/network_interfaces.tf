# Network interfaces beyond a plain network or bridge NIC. Every option below restarts a
# running domain when it changes (link_state and bandwidth will become live changes).
resource "libvirt_domain" "router" {
  name       = "router-1"
  vcpu       = 2
  memory_mib = 1024

  disk {
    volume_id = "default/router-1.qcow2"
  }

  # PXE first, on a libvirt network's port group, with an nwfilter, traffic shaping and
  # two virtio queue pairs.
  network_interface {
    network    = "lab"
    port_group = "servers" # must exist in network "lab"
    boot_order = 1
    queues     = 2
    mtu        = 1500
    filter = {
      name       = "clean-traffic"
      parameters = { IP = "10.10.0.5" }
    }
    bandwidth = {
      inbound  = { average_kib = 12500, peak_kib = 25000, burst_kib = 1024 } # KiB/s, KiB
      outbound = { average_kib = 12500 }
    }
  }

  # An Open vSwitch port carrying VLANs 10 and 20, untagged 1 as its native VLAN.
  # libvirt generates interface_id when it is left out; the provider keeps it.
  network_interface {
    bridge      = "ovsbr0"
    virtualport = { type = "openvswitch" }
    vlan        = { tags = [10, 20], native_tag = 1, native_mode = "untagged" }
  }

  # macvtap on a host link, no bridge needed; the guest may change its MAC filters.
  network_interface {
    direct                 = { dev = "eno1", mode = "bridge" } # mode default: vepa
    trust_guest_rx_filters = true
    link_state             = "down" # cable unplugged until set to "up"
    rom                    = { bar = "off" }
  }
}
