variable "ssh_public_key" {
  description = "Public key for the core user, e.g. file(\"~/.ssh/id_ed25519.pub\")"
  type        = string
}

# An Ignition config (here written with jsonencode; the Butane / ct providers render
# one too), stored as a volume and handed to a Fedora CoreOS guest through fw_cfg.
resource "libvirt_ignition" "node" {
  name = "node-1.ign"
  pool = "default"
  content = jsonencode({
    ignition = { version = "3.4.0" }
    passwd = {
      users = [{ name = "core", sshAuthorizedKeys = [var.ssh_public_key] }]
    }
  })
}

resource "libvirt_volume" "node" {
  name           = "node-1.qcow2"
  pool           = "default"
  backing_volume = "default/fedora-coreos.qcow2"
}

resource "libvirt_domain" "node" {
  name        = "node-1"
  vcpu        = 2
  memory_mib  = 2048
  ignition_id = libvirt_ignition.node.id

  disk {
    volume_id = libvirt_volume.node.id
  }

  network_interface {
    network = "default"
  }
}
