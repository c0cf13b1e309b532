# A fixed address for a machine's MAC on the "default" NAT network. The entry is added to
# the running network and to its definition; no network restart, no guest loses its link.
resource "libvirt_dhcp_reservation" "web" {
  network  = "default"
  mac      = "52:54:00:6c:3c:01"
  ip       = "192.168.122.10"
  hostname = "web"
}
