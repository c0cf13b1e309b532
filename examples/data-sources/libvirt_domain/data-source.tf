# Look up a domain by name (or by uuid): state, sizes, addresses and console.
data "libvirt_domain" "web" {
  name = "web-1"
}

output "web" {
  value = {
    state       = data.libvirt_domain.web.state
    ip_address  = data.libvirt_domain.web.ip_address
    console_url = data.libvirt_domain.web.console_url
    vcpu        = data.libvirt_domain.web.vcpu
    memory_mib  = data.libvirt_domain.web.memory_mib
  }
}
