# A routed network (no NAT) with a static route: the LAN 10.30.0.0/24 sits behind a
# router VM at 10.20.0.2 on this network; libvirt adds the route on the host while the
# network runs. DNS SRV and TXT records and the port groups change live (network-update:
# no restart, guests keep their links); a changed route replaces the network, and the
# plan warns naming the running domains it would cut off.
resource "libvirt_network" "routed" {
  name      = "routed"
  mode      = "route"
  addresses = ["10.20.0.0/24"]
  routes    = [{ address = "10.30.0.0/24", gateway = "10.20.0.2", metric = 10 }]
  dhcp {}

  dns {
    srv = [{ service = "ldap", protocol = "tcp", target = "ldap.lab.internal", port = 389, priority = 10, weight = 5 }]
    txt = [{ name = "info", value = "routed lab" }]
  }

  # Guests pick a port group with their interface's port_group; "standard" applies to
  # those that name none. Bandwidth needs the kernel's sfq/htb qdiscs on the host.
  port_groups = [
    { name = "standard", default = true, bandwidth = { inbound = { average_kib = 12500 }, outbound = { average_kib = 12500 } } },
    { name = "bulk", bandwidth = { outbound = { average_kib = 1250, peak_kib = 2500, burst_kib = 1024 } } },
  ]

  # Extra dnsmasq.conf lines (libvirt's dnsmasq:options); a change replaces the network.
  dnsmasq_options = ["dhcp-option=option:ntp-server,10.20.0.1"]
}
