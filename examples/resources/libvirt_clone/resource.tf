# A linked clone of a running domain: qcow2 overlays that share the source's base
# image, holding a point-in-time copy of what the source wrote on top of it. The source
# keeps running while it is copied. The clone gets a new UUID, MACs derived from its
# name, and a cloud-init seed of its own (the source's is never shared).
resource "libvirt_cloudinit_iso" "web2" {
  name        = "web2-seed.iso"
  pool        = "default"
  instance_id = "web2"
  hostname    = "web2"
  user_data   = "#cloud-config\n"
}

resource "libvirt_clone" "web2" {
  source_domain_id = "web" # a name or UUID, e.g. libvirt_domain.web.id
  name             = "web2"
  mode             = "linked"
  cloudinit_id     = libvirt_cloudinit_iso.web2.id
  memory_mib       = 2048 # within the source's max_memory_mib
}

# A full clone: standalone qcow2 copies (backing chains flattened) in another pool,
# defined but not started.
resource "libvirt_clone" "web_copy" {
  source_domain_id = "web"
  name             = "web-copy"
  mode             = "full"
  pool             = "backup"
  running          = false
}
