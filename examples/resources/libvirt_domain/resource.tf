# A small VM from a qcow2 overlay and a cloud-init seed, on the default NAT network.
resource "libvirt_volume" "root" {
  name           = "web-1.qcow2"
  pool           = "default"
  backing_volume = "default/debian-12.qcow2"
}

resource "libvirt_cloudinit_iso" "seed" {
  name        = "web-1-seed.iso"
  pool        = "default"
  instance_id = "web-1"
  hostname    = "web-1"
  user_data   = <<-EOT
    #cloud-config
    ssh_authorized_keys:
      - ssh-ed25519 AAAA... admin@example.com
  EOT
}

resource "libvirt_domain" "web" {
  name       = "web-1"
  vcpu       = 2
  memory_mib = 2048

  # Headroom: vcpu up to 4 and memory up to 4 GiB change live, without a restart.
  max_vcpu       = 4
  max_memory_mib = 4096

  cloudinit_id = libvirt_cloudinit_iso.seed.id

  disk {
    volume_id = libvirt_volume.root.id
  }

  network_interface {
    network = "default"
    wait_for_ip {
      source  = "lease" # or "agent" (qemu-ga), or "any"
      timeout = "3m"
    }
  }

  shutdown = {
    timeout = "30s" # then forced off
  }
}

# UEFI through libvirt's firmware auto-selection, with its own nvram varstore.
resource "libvirt_domain" "uefi" {
  name       = "uefi-1"
  vcpu       = 1
  memory_mib = 1024
  firmware   = "uefi"
  os         = { machine = "q35" }
  running    = false

  disk {
    volume_id = "default/uefi-1.qcow2"
  }

  disk {
    path   = "/var/lib/libvirt/images/installer.iso"
    device = "cdrom"
  }

  network_interface {
    bridge = "br0"
    mac    = "52:54:00:12:34:56"
  }

  graphics = {
    type   = "spice"
    listen = "127.0.0.1"
  }
}

output "web_ip" {
  value = libvirt_domain.web.ip_address
}

output "web_console" {
  value = libvirt_domain.web.console_url
}
