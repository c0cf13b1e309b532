# An aarch64 (64-bit ARM) guest on any host that has qemu-system-aarch64: emulated (TCG)
# on an x86_64 host, hardware-accelerated (type = "kvm") on an ARM one. The provider gives
# it machine "virt", a cortex-a57 CPU (host-passthrough under kvm) and no x86 features;
# the emulator defaults to the host's binary for the arch. firmware = "uefi" boots an
# ARM cloud image through AAVMF (Debian: qemu-efi-aarch64) and turns ACPI on.
resource "libvirt_domain" "arm" {
  name       = "arm-1"
  vcpu       = 2
  memory_mib = 1024
  firmware   = "uefi"
  os         = { arch = "aarch64" }

  disk {
    volume_id = "default/debian-12-arm64.qcow2"
  }

  network_interface {
    network = "default"
  }

  devices = {
    # ARM guests get no input devices by themselves, and no USB controller: virtio ones
    # make the VNC console usable.
    input = [
      { type = "tablet", bus = "virtio" },
      { type = "keyboard", bus = "virtio" },
    ]
  }
}
