# Adopt every domain of a host whose name starts with "web-": import blocks driven by
# the listing, into resources written (or generated with
# `terraform plan -generate-config-out=generated.tf`) for them.
data "libvirt_domains" "web" {
  name_prefix = "web-"
}

import {
  for_each = toset(data.libvirt_domains.web.names)
  to       = libvirt_domain.web[each.key]
  id       = each.key
}

resource "libvirt_domain" "web" {
  for_each   = toset(data.libvirt_domains.web.names)
  name       = each.key
  vcpu       = 2
  memory_mib = 2048
  network_interface {
    network = "default"
  }
}

output "running_web_domains" {
  value = [for d in data.libvirt_domains.web.domains : d.name if d.state == "running"]
}
