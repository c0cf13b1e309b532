# Disks QEMU reaches over the network itself.
resource "libvirt_secret" "ceph" {
  usage_type       = "ceph"
  usage_name       = "client.libvirt secret"
  value_wo         = var.ceph_key # as `ceph auth get-key client.libvirt` prints it
  value_wo_version = 1
}

variable "ceph_key" {
  type      = string
  sensitive = true
  ephemeral = true
}

resource "libvirt_domain" "db" {
  name       = "db-1"
  vcpu       = 4
  memory_mib = 8192

  # The system disk: an rbd image, three monitors, the key in a libvirt secret.
  disk {
    network_source = {
      protocol = "rbd"
      name     = "vms/db-1-root"
      hosts    = [{ name = "mon1" }, { name = "mon2" }, { name = "mon3" }]
      auth     = { username = "libvirt", secret_id = libvirt_secret.ceph.id }
    }
  }

  # A data disk exported by `qemu-nbd -x data` on the storage host.
  disk {
    network_source = {
      protocol = "nbd"
      name     = "data"
      hosts    = [{ name = "storage.example", port = 10809 }]
    }
  }

  # An installer ISO straight from a web server.
  disk {
    device = "cdrom"
    network_source = {
      protocol = "https"
      name     = "/isos/debian-12.iso"
      hosts    = [{ name = "mirror.example" }]
    }
  }
}
