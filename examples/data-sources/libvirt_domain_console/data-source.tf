# What a running guest writes on its serial console, read for `wait_sec` seconds
# (libvirt keeps no history of a pty console): the last `lines` lines of it.
data "libvirt_domain_console" "web" {
  domain_id = "web-1" # a name or UUID, e.g. libvirt_domain.web.id
  lines     = 20
  wait_sec  = 5
}

output "web_console" {
  value = data.libvirt_domain_console.web.output
}
