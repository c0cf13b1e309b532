# A Windows 11-ready VM: UEFI with Secure Boot (Microsoft's keys enrolled), an emulated
# TPM 2.0 (swtpm on the host), Hyper-V enlightenments and virtio disk and NIC (Windows
# needs the virtio-win drivers, here from a second cdrom, during setup).
resource "libvirt_domain" "win11" {
  name       = "win11-1"
  vcpu       = 4
  memory_mib = 8192

  firmware = "uefi"
  os = {
    machine     = "q35" # Secure Boot firmware is built for q35 only
    secure_boot = {}    # enrolled_keys = true: Secure Boot enforced from the first boot; smm goes on
  }

  features = {
    hyperv = ["relaxed", "vapic", "spinlocks", "vpindex", "runtime", "synic", "stimer", "frequencies", "tlbflush", "ipi"]
  }

  disk {
    path = "/var/lib/libvirt/images/win11-1.qcow2"
  }
  disk {
    device = "cdrom"
    path   = "/var/lib/libvirt/images/Win11_English_x64.iso"
  }
  disk {
    device = "cdrom"
    path   = "/var/lib/libvirt/images/virtio-win.iso"
  }

  network_interface {
    network = "default"
  }

  graphics = { type = "spice" }

  devices = {
    tpm   = {} # tpm-crb, emulator, version 2.0; its state survives updates and restarts, destroy removes it
    input = [{ type = "tablet", bus = "usb" }]
  }
}
