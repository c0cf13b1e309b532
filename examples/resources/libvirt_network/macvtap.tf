# Guests straight on host links through macvtap (bridge mode: guests on one link see
# each other and the LAN, not the host). Each guest interface takes a link of the pool;
# links added to or removed from `interfaces` change live.
resource "libvirt_network" "macvtap" {
  name    = "macvtap"
  mode    = "bridge"
  forward = { interfaces = ["enp1s0", "enp2s0"] }
}

# SR-IOV: each guest interface gets a virtual function of the physical function
# enp3s0f0, tagged into VLAN 42 by the NIC.
resource "libvirt_network" "sriov" {
  name    = "sriov"
  mode    = "hostdev"
  forward = { pf = "enp3s0f0" }
  vlan    = { tags = [42] }
}

# An Open vSwitch bridge (made with ovs-vsctl): the network gives guests VLAN 10 unless
# their interface picks the "trunk" port group.
resource "libvirt_network" "ovs" {
  name        = "ovs"
  mode        = "bridge"
  bridge      = "ovsbr0"
  virtualport = { type = "openvswitch" }
  vlan        = { tags = [10] }
  port_groups = [{ name = "trunk", vlan = { tags = [20, 30], trunk = true } }]
}
