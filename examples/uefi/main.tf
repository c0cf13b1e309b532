# A UEFI machine: libvirt's firmware auto-selection picks the host's OVMF build and gives
# the domain its own NVRAM varstore (a copy of the firmware's template), which is
# removed again when the domain is destroyed. The plan fails early, naming the host, when
# the host offers no UEFI firmware (package ovmf on Debian/Ubuntu, edk2-ovmf on Fedora/RHEL).
#
# The image must boot under UEFI: current cloud images of Debian, Ubuntu, Fedora and
# their kin do (they carry an EFI system partition).

terraform {
  required_version = ">= 1.5"
  required_providers {
    libvirt = {
      source = "kvmforge/libvirt"
    }
  }
}

variable "uri" {
  description = "libvirt connection URI."
  type        = string
  default     = "qemu:///system"
}

variable "image_url" {
  description = "A UEFI-bootable qcow2 cloud image (http, https or file URL)."
  type        = string
  default     = "https://cloud.debian.org/images/cloud/bookworm/latest/debian-12-genericcloud-amd64.qcow2"
}

variable "name" {
  description = "Name of the machine (and its host name)."
  type        = string
  default     = "uefi-1"
}

variable "pool" {
  description = "Storage pool for the volumes."
  type        = string
  default     = "default"
}

variable "network" {
  description = "libvirt network the machine attaches to."
  type        = string
  default     = "default"
}

variable "running" {
  description = "Whether the machine runs."
  type        = bool
  default     = true
}

provider "libvirt" {
  uri = var.uri
}

data "libvirt_host" "this" {
  lifecycle {
    postcondition {
      condition     = contains(self.firmware_types, "efi")
      error_message = "The libvirt host ${self.hostname} offers no UEFI firmware for ${self.default_domain_type} domains (firmware types: ${join(", ", self.firmware_types)}). Install OVMF there (Debian/Ubuntu: ovmf, Fedora/RHEL: edk2-ovmf) and restart libvirtd."
    }
  }
}

resource "libvirt_volume" "base" {
  name       = "${var.name}-base.qcow2"
  pool       = var.pool
  source_url = var.image_url
}

resource "libvirt_volume" "root" {
  name           = "${var.name}-root.qcow2"
  pool           = var.pool
  backing_volume = libvirt_volume.base.id
  capacity_bytes = 10 * 1024 * 1024 * 1024
}

resource "libvirt_cloudinit_iso" "seed" {
  name        = "${var.name}-seed.iso"
  pool        = var.pool
  instance_id = var.name
  hostname    = var.name
  user_data   = "#cloud-config\n{}\n"
}

resource "libvirt_domain" "vm" {
  # The precondition above has checked the host before anything is created.
  depends_on = [data.libvirt_host.this]

  name       = var.name
  vcpu       = 2
  memory_mib = 2048
  os         = { machine = "q35" } # UEFI guests want q35; libvirt expands it to e.g. pc-q35-7.2 (no drift)
  firmware   = "uefi"
  running    = var.running

  cloudinit_id = libvirt_cloudinit_iso.seed.id

  disk {
    volume_id = libvirt_volume.root.id
  }

  network_interface {
    network = var.network
  }
}

output "firmware_offered" {
  description = "The firmware images the host offers (OVMF builds among them)."
  value       = data.libvirt_host.this.firmware
}

output "domain_id" {
  description = "The machine's UUID."
  value       = libvirt_domain.vm.id
}
