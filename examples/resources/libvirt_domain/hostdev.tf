# Host devices passed through to a guest, one hostdev block per device: a PCI device by
# address, a USB device by ids (wherever it is plugged in) or by bus:device, a mediated
# device (vGPU slice) by uuid, a SCSI device on a host adapter. The plan checks that the
# host has the PCI, USB and mdev devices when the domain is to run; libvirt itself checks
# only at start. Adding or removing one restarts a running domain.
resource "libvirt_domain" "passthrough" {
  name       = "passthrough-1"
  vcpu       = 4
  memory_mib = 8192

  disk {
    volume_id = "default/passthrough-1.qcow2"
  }

  # An NVMe drive the guest boots from.
  hostdev {
    pci        = "0000:04:00.0"
    boot_order = 1
  }

  # A USB security key, by vendor and product id.
  hostdev {
    usb = {
      vendor  = "0x1050"
      product = "0x0407"
    }
  }

  # A serial adapter on a given port (bus:device as lsusb prints them).
  hostdev {
    usb_address = "1:5"
  }

  # A vGPU slice created on the host with mdevctl.
  hostdev {
    mdev       = "c2177883-f1bb-47f0-914d-32a22e3a8804"
    mdev_model = "vfio-pci"
  }

  # A tape drive on the host's first SCSI adapter.
  hostdev {
    scsi = {
      adapter = "scsi_host0"
      bus     = 0
      target  = 3
      unit    = 0
    }
  }
}
