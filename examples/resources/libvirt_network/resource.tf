# An isolated lab network with IPv4 and IPv6, DHCP on part of the IPv4 subnet, fixed
# addresses for two machines and an extra DNS name. Guests reach each other and the host
# (10.17.0.1 / fd00:17::1) only.
resource "libvirt_network" "lab" {
  name      = "lab"
  mode      = "isolated"
  domain    = "lab.internal"
  addresses = ["10.17.0.0/24", "fd00:17::/64"]
  autostart = true

  dhcp {
    ranges = [{ start = "10.17.0.100", end = "10.17.0.199" }]
    # Changes to hosts apply live: no network restart, guests keep their links.
    hosts = [
      { mac = "52:54:00:17:00:10", ip = "10.17.0.10", hostname = "db" },
      { mac = "52:54:00:17:00:11", ip = "10.17.0.11", hostname = "cache" },
    ]
  }

  dns {
    hosts = [{ ip = "10.17.0.10", hostnames = ["postgres"] }]
  }
}

# NAT to the outside, libvirt's default DHCP range (10.18.0.2 - 10.18.0.254), host
# entries left to libvirt_dhcp_reservation (dhcp.hosts omitted).
resource "libvirt_network" "nat" {
  name      = "nat"
  addresses = ["10.18.0.0/24"]
  dhcp {}
}

resource "libvirt_dhcp_reservation" "web" {
  network  = libvirt_network.nat.name
  mac      = "52:54:00:18:00:10"
  ip       = "10.18.0.10"
  hostname = "web"
}

# Guests on the host's existing bridge br0 (the LAN's DHCP and DNS serve them).
resource "libvirt_network" "lan" {
  name   = "lan"
  mode   = "bridge"
  bridge = "br0"
}
