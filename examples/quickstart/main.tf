# Quickstart: one small VM from a base image, booted with cloud-init, waiting for its IP.
#
#   base image (uploaded from a local file) → copy-on-write overlay → cloud-init seed ISO
#   → domain on a NAT network, with wait_for_ip
#
# `make quickstart` applies this against the local test host with the tiny test guest
# image; point image_path at any cloud image (e.g. a Debian genericcloud qcow2) to use
# it on your own host.

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

variable "image_path" {
  description = "Path of a qcow2 cloud image on the machine running Terraform."
  type        = string
}

variable "pool" {
  description = "Storage pool for the volumes."
  type        = string
  default     = "default"
}

variable "network" {
  description = "libvirt network the VM attaches to (NAT with DHCP)."
  type        = string
  default     = "default"
}

variable "name" {
  description = "Name of the VM (and its host name)."
  type        = string
  default     = "quickstart"
}

provider "libvirt" {
  uri = var.uri
}

data "libvirt_host" "this" {}

resource "libvirt_volume" "base" {
  name        = "${var.name}-base.qcow2"
  pool        = var.pool
  source_file = var.image_path
}

resource "libvirt_volume" "root" {
  name           = "${var.name}-root.qcow2"
  pool           = var.pool
  backing_volume = libvirt_volume.base.id
}

resource "libvirt_cloudinit_iso" "seed" {
  name        = "${var.name}-seed.iso"
  pool        = var.pool
  instance_id = var.name
  hostname    = var.name
  user_data   = "#cloud-config\n{}\n"
}

resource "libvirt_domain" "vm" {
  name       = var.name
  vcpu       = 1
  memory_mib = 256

  cloudinit_id = libvirt_cloudinit_iso.seed.id

  disk {
    volume_id = libvirt_volume.root.id
  }

  network_interface {
    network = var.network
    wait_for_ip {
      source  = "lease"
      timeout = "5m"
    }
  }
}

output "ip_address" {
  description = "The VM's IPv4 address, from its DHCP lease."
  value       = libvirt_domain.vm.ip_address
}

output "domain_type" {
  description = "kvm when the host offers it, else qemu (software emulation)."
  value       = data.libvirt_host.this.default_domain_type
}

output "console_url" {
  description = "Where to point a VNC viewer (on the host)."
  value       = libvirt_domain.vm.console_url
}
