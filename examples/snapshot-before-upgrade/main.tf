# Snapshot before an upgrade, and a one-variable rollback.
#
# Changing var.release is the upgrade. On that apply, in this order:
#   1. libvirt_snapshot.before_upgrade is replaced by "before-<release>": a memory snapshot
#      of the running machine as it is now (disks, RAM and device state, atomically);
#   2. terraform_data.upgrade runs var.upgrade_command (your Ansible playbook, a script
#      over SSH, ...) with the machine's address and the release in its environment.
# If the upgrade goes wrong, `terraform apply -var rollback=true` reverts the machine to
# that snapshot: it comes back running, exactly where it was before the upgrade began.
# Set rollback back to false (destroying the revert does nothing on the host) and fix
# forward. Only the snapshot of the latest upgrade is kept.
#
# Memory snapshots are internal qcow2 snapshots: every writable disk must be qcow2 (the
# cloud-init cdrom is read-only and is fine). QEMU cannot take them of UEFI guests (the
# NVRAM is raw pflash); use a BIOS machine here, or snapshot a stopped UEFI machine.

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
  description = "qcow2 cloud image of the machine (http, https or file URL)."
  type        = string
  default     = "https://cloud.debian.org/images/cloud/bookworm/latest/debian-12-genericcloud-amd64.qcow2"
}

variable "name" {
  description = "Name of the machine (and its host name)."
  type        = string
  default     = "app-1"
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

variable "memory_mib" {
  description = "Memory of the machine in MiB (a memory snapshot writes all of it to the disk image)."
  type        = number
  default     = 1024
}

variable "release" {
  description = "The release the machine runs. Changing it snapshots the machine, then runs upgrade_command."
  type        = string
  default     = "1.0"

  validation {
    condition     = can(regex("^[A-Za-z0-9][A-Za-z0-9._-]*$", var.release))
    error_message = "release must be letters, digits, '.', '_' or '-' (it names the snapshot)."
  }
}

variable "upgrade_command" {
  description = "Runs on the machine running Terraform after the snapshot is taken, with IP and RELEASE in its environment."
  type        = string
  default     = "echo \"upgrade $IP to $RELEASE: plug your playbook in here\""
}

variable "rollback" {
  description = "Revert the machine to the snapshot taken before the current release."
  type        = bool
  default     = false
}

provider "libvirt" {
  uri = var.uri
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
}

resource "libvirt_cloudinit_iso" "seed" {
  name        = "${var.name}-seed.iso"
  pool        = var.pool
  instance_id = var.name
  hostname    = var.name
  user_data   = "#cloud-config\n{}\n"
}

resource "libvirt_domain" "app" {
  name       = var.name
  vcpu       = 1
  memory_mib = var.memory_mib

  cloudinit_id = libvirt_cloudinit_iso.seed.id

  disk {
    volume_id = libvirt_volume.root.id
  }

  network_interface {
    network = var.network
    wait_for_ip {
      source = "lease"
    }
  }
}

resource "libvirt_snapshot" "before_upgrade" {
  domain_id   = libvirt_domain.app.id
  name        = "before-${var.release}"
  description = "${var.name} as it was before the upgrade to ${var.release}"
  memory      = true

  timeouts {
    create = "15m" # all of the RAM is written out
  }
}

resource "terraform_data" "upgrade" {
  triggers_replace = [var.release]

  provisioner "local-exec" {
    command = var.upgrade_command
    environment = {
      IP      = libvirt_domain.app.ip_address
      RELEASE = var.release
    }
  }

  depends_on = [libvirt_snapshot.before_upgrade]
}

resource "libvirt_snapshot_revert" "rollback" {
  count       = var.rollback ? 1 : 0
  snapshot_id = libvirt_snapshot.before_upgrade.id

  triggers = {
    release = var.release
  }
}

output "snapshot" {
  description = "The snapshot a rollback returns to."
  value       = libvirt_snapshot.before_upgrade.id
}

output "ip_address" {
  description = "The machine's IPv4 address."
  value       = libvirt_domain.app.ip_address
}
