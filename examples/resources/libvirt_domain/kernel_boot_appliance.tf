# A kernel-boot appliance: no disk at all. QEMU loads the kernel and the initramfs (the
# whole appliance) from the host; the command line sends the console to the serial port.
# The files must be readable by libvirt's QEMU user (e.g. under /var/lib/libvirt/boot).
resource "libvirt_domain" "appliance" {
  name       = "appliance-1"
  vcpu       = 1
  memory_mib = 512

  os = {
    kernel = {
      path    = "/var/lib/libvirt/boot/appliance/vmlinuz"
      initrd  = "/var/lib/libvirt/boot/appliance/initrd.img"
      cmdline = "console=ttyS0,115200n8 quiet"
    }

    # What the appliance reads about itself: /sys/class/dmi/id/product_name, and
    # /sys/firmware/qemu_fw_cfg/by_name/opt/com.example/role/raw (kernel module qemu_fw_cfg).
    smbios = {
      system = {
        manufacturer = "Example Corp"
        product      = "Edge Appliance"
      }
    }
    fw_cfg = {
      "opt/com.example/role" = "edge-router"
    }
  }

  graphics = { type = "none" }

  network_interface {
    network = "default"
    wait_for_ip {
      source = "lease"
    }
  }
}

output "appliance_ip" {
  value = libvirt_domain.appliance.network_interface[0].addresses[0]
}
