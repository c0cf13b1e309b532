# Several libvirt hosts from one configuration: one provider alias per host, and
# `for_each` over the machines placed on each. Every host runs the same shape of machine
# (a copy-on-write overlay of a base image that each host holds once, a cloud-init seed
# and a domain on that host's NAT network), so adding a machine is one line in
# var.machines and moving one is a change of its `host`.
#
# Terraform (unlike OpenTofu >= 1.9) cannot `for_each` over provider blocks, so there is
# one alias per host and one resource block per alias; `local.on` groups the machines.
# With OpenTofu 1.9+ you can write `provider "libvirt" { for_each = var.hosts ... }` and
# `provider = libvirt.by_host[each.value.host]` instead.

terraform {
  required_version = ">= 1.5"
  required_providers {
    libvirt = {
      source = "kvmforge/libvirt"
    }
  }
}

variable "hosts" {
  description = "libvirt URIs by host name (qemu+ssh://user@host/system verifies host keys against ~/.ssh/known_hosts)."
  type        = map(string)
  default = {
    hv1 = "qemu+ssh://root@hv1.example.com/system"
    hv2 = "qemu+ssh://root@hv2.example.com/system"
  }

  validation {
    condition     = alltrue([for h in ["hv1", "hv2"] : contains(keys(var.hosts), h)])
    error_message = "hosts must name hv1 and hv2: this example has one provider alias for each."
  }
}

variable "machines" {
  description = "Machines to run, by name: the host they run on and their size."
  type = map(object({
    host       = string
    vcpu       = optional(number, 1)
    memory_mib = optional(number, 1024)
  }))
  default = {
    web-1 = { host = "hv1" }
    web-2 = { host = "hv2" }
    db-1  = { host = "hv1", vcpu = 2, memory_mib = 4096 }
  }

  validation {
    condition     = alltrue([for m in values(var.machines) : contains(["hv1", "hv2"], m.host)])
    error_message = "Each machine's host must be hv1 or hv2."
  }
}

variable "image_url" {
  description = "qcow2 cloud image every host downloads once as its base volume."
  type        = string
  default     = "https://cloud.debian.org/images/cloud/bookworm/latest/debian-12-genericcloud-amd64.qcow2"
}

variable "base_volume" {
  description = "Name of the base image volume every host keeps once in its pool."
  type        = string
  default     = "multi-host-base.qcow2"
}

variable "pools" {
  description = "Storage pool for the volumes, by host."
  type        = map(string)
  default = {
    hv1 = "default"
    hv2 = "default"
  }
}

variable "disk_gib" {
  description = "Root disk size of every machine in GiB (a sparse overlay: it takes only what the guest writes)."
  type        = number
  default     = 20
}

variable "network" {
  description = "NAT network on every host."
  type        = string
  default     = "default"
}

variable "wait_for_ip" {
  description = "Wait until each machine has a DHCP lease (its address is then in the outputs)."
  type        = bool
  default     = true
}

provider "libvirt" {
  alias = "hv1"
  uri   = var.hosts["hv1"]
}

provider "libvirt" {
  alias = "hv2"
  uri   = var.hosts["hv2"]
}

locals {
  # Machines grouped by host: local.on["hv1"] = { web-1 = {...}, db-1 = {...} }.
  on = { for h in keys(var.hosts) : h => { for n, m in var.machines : n => m if m.host == h } }
}

# ---- hv1 ----

resource "libvirt_volume" "base_hv1" {
  provider   = libvirt.hv1
  name       = var.base_volume
  pool       = var.pools["hv1"]
  source_url = var.image_url
}

resource "libvirt_volume" "root_hv1" {
  provider       = libvirt.hv1
  for_each       = local.on["hv1"]
  name           = "${each.key}-root.qcow2"
  pool           = var.pools["hv1"]
  backing_volume = libvirt_volume.base_hv1.id
  capacity_bytes = var.disk_gib * 1024 * 1024 * 1024
}

resource "libvirt_cloudinit_iso" "seed_hv1" {
  provider    = libvirt.hv1
  for_each    = local.on["hv1"]
  name        = "${each.key}-seed.iso"
  pool        = var.pools["hv1"]
  instance_id = each.key
  hostname    = each.key
  user_data   = "#cloud-config\npackage_update: true\n"
}

resource "libvirt_domain" "hv1" {
  provider     = libvirt.hv1
  for_each     = local.on["hv1"]
  name         = each.key
  vcpu         = each.value.vcpu
  memory_mib   = each.value.memory_mib
  autostart    = true
  cloudinit_id = libvirt_cloudinit_iso.seed_hv1[each.key].id

  disk {
    volume_id = libvirt_volume.root_hv1[each.key].id
  }

  network_interface {
    network = var.network
    dynamic "wait_for_ip" {
      for_each = var.wait_for_ip ? [1] : []
      content {
        source = "lease"
      }
    }
  }
}

# ---- hv2: the same machines' shape on the second host ----

resource "libvirt_volume" "base_hv2" {
  provider   = libvirt.hv2
  name       = var.base_volume
  pool       = var.pools["hv2"]
  source_url = var.image_url
}

resource "libvirt_volume" "root_hv2" {
  provider       = libvirt.hv2
  for_each       = local.on["hv2"]
  name           = "${each.key}-root.qcow2"
  pool           = var.pools["hv2"]
  backing_volume = libvirt_volume.base_hv2.id
  capacity_bytes = var.disk_gib * 1024 * 1024 * 1024
}

resource "libvirt_cloudinit_iso" "seed_hv2" {
  provider    = libvirt.hv2
  for_each    = local.on["hv2"]
  name        = "${each.key}-seed.iso"
  pool        = var.pools["hv2"]
  instance_id = each.key
  hostname    = each.key
  user_data   = "#cloud-config\npackage_update: true\n"
}

resource "libvirt_domain" "hv2" {
  provider     = libvirt.hv2
  for_each     = local.on["hv2"]
  name         = each.key
  vcpu         = each.value.vcpu
  memory_mib   = each.value.memory_mib
  autostart    = true
  cloudinit_id = libvirt_cloudinit_iso.seed_hv2[each.key].id

  disk {
    volume_id = libvirt_volume.root_hv2[each.key].id
  }

  network_interface {
    network = var.network
    dynamic "wait_for_ip" {
      for_each = var.wait_for_ip ? [1] : []
      content {
        source = "lease"
      }
    }
  }
}

output "machines" {
  description = "Every machine: its host, its domain UUID and its IPv4 address."
  value = merge(
    { for n, d in libvirt_domain.hv1 : n => { host = "hv1", uuid = d.id, ip = d.ip_address } },
    { for n, d in libvirt_domain.hv2 : n => { host = "hv2", uuid = d.id, ip = d.ip_address } },
  )
}
