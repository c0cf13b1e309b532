variable "ssh_public_key" {
  description = "Public key to authorise for the admin user, e.g. file(\"~/.ssh/id_ed25519.pub\")"
  type        = string
}

# A NoCloud seed: meta-data written from instance_id and hostname.
resource "libvirt_cloudinit_iso" "web" {
  name        = "web-1-cloudinit.iso"
  pool        = "default"
  instance_id = "web-1"
  hostname    = "web-1"

  user_data = <<-EOT
    #cloud-config
    users:
      - name: admin
        sudo: ALL=(ALL) NOPASSWD:ALL
        ssh_authorized_keys:
          - ${var.ssh_public_key}
  EOT

  # network-config v2; checked to be YAML at plan time.
  network_config = yamlencode({
    version = 2
    ethernets = {
      nic0 = {
        match       = { name = "en*" }
        addresses   = ["192.168.122.10/24"]
        routes      = [{ to = "default", via = "192.168.122.1" }]
        nameservers = { addresses = ["192.168.122.1"] }
      }
    }
  })
}

# Or the whole meta-data file, plus vendor-data.
resource "libvirt_cloudinit_iso" "db" {
  name        = "db-1-cloudinit.iso"
  pool        = "default"
  meta_data   = "instance-id: db-1\nlocal-hostname: db-1\n"
  user_data   = "#cloud-config\npackage_update: true\n"
  vendor_data = "#cloud-config\ntimezone: UTC\n"
}

output "seed_sha256" {
  value = libvirt_cloudinit_iso.web.sha256
}
