# Hot-plug: a running web server gets a scratch disk and a second NIC without a restart
# (the plan says update_method = "live"). Remove the blocks again and apply: the guest is
# asked to let them go and they leave the running domain, then its definition. Taking the
# second NIC's link down (link_state = "down") is live too; the installer ISO in the cdrom
# is swapped live by changing its path.
resource "libvirt_volume" "web_root" {
  name           = "web-1.qcow2"
  pool           = "default"
  backing_volume = "default/debian-12.qcow2"
}

resource "libvirt_volume" "web_scratch" {
  name           = "web-1-scratch.qcow2"
  pool           = "default"
  format         = "qcow2"
  capacity_bytes = 10 * 1024 * 1024 * 1024
}

resource "libvirt_domain" "web" {
  name       = "web-1"
  vcpu       = 2
  memory_mib = 2048

  disk {
    volume_id = libvirt_volume.web_root.id
  }

  disk {
    device = "cdrom"
    path   = "/var/lib/libvirt/images/tools-2.iso" # another path: a live medium change
  }

  # Added to the running domain: virtio, scsi and usb disks hot-plug; sata and ide restart.
  disk {
    volume_id = libvirt_volume.web_scratch.id
  }

  network_interface {
    network = "default"
  }

  # Added live; libvirt picks the MAC, which the state keeps.
  network_interface {
    network    = "default"
    link_state = "down" # up / down: live
  }
}
