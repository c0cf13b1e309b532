# Several libvirt hosts from one configuration: one provider block with `hosts`, and
# `host` on every object. Every host runs the same shape of machine (a copy-on-write
# overlay of a base image that each host holds once, a cloud-init seed and a domain on
# that host's NAT network), so adding a machine is one line in var.machines and moving
# one is a change of its `host`: its overlay, seed and domain are made again on the new
# host and removed from the old one (a fresh machine, booted from the base image).
#
# These machines' disks are libvirt_volume resources of their host, so they are not
# live-migrated: with `migrate = true` on the domain, the same change of `host` would
# replace the volumes under the running guest before the domain moved. To move running
# machines, keep their disks on storage both hosts see or let the migration copy disks
# that no libvirt_volume manages: see the many-hosts guide, "Migration".

terraform {
  required_version = ">= 1.5"
  required_providers {
    libvirt = {
      source = "kvmforge/libvirt"
    }
  }
}

variable "hosts" {
  description = "The libvirt hosts, by name: the URI Terraform connects to, and the URI the other hosts' daemons reach it by for a migration (default: uri)."
  type = map(object({
    uri      = string
    peer_uri = optional(string)
  }))
  default = {
    hv1 = { uri = "qemu+ssh://root@hv1.example.com/system", peer_uri = "qemu+tcp://10.0.0.1/system" }
    hv2 = { uri = "qemu+ssh://root@hv2.example.com/system", peer_uri = "qemu+tcp://10.0.0.2/system" }
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
    condition     = alltrue([for m in values(var.machines) : contains(keys(var.hosts), m.host)])
    error_message = "Each machine's host must be one of var.hosts."
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

variable "pool" {
  description = "Storage pool for the volumes, by the same name on every host."
  type        = string
  default     = "default"
}

variable "disk_gib" {
  description = "Root disk size of every machine in GiB (a sparse overlay: it takes only what the guest writes)."
  type        = number
  default     = 20
}

variable "network" {
  description = "NAT network, by the same name on every host."
  type        = string
  default     = "default"
}

variable "wait_for_ip" {
  description = "Wait until each machine has a DHCP lease (its address is then in the outputs)."
  type        = bool
  default     = true
}

# One provider for every host. Nothing is placed on the host `default` (the provider's own
# uri) here, so it is never dialled: clients connect on first use.
provider "libvirt" {
  hosts = {
    for name, h in var.hosts : name => {
      uri      = h.uri
      peer_uri = h.peer_uri
    }
  }
}

resource "libvirt_volume" "base" {
  for_each   = var.hosts
  host       = each.key
  name       = var.base_volume
  pool       = var.pool
  source_url = var.image_url
}

resource "libvirt_volume" "root" {
  for_each       = var.machines
  host           = each.value.host
  name           = "${each.key}-root.qcow2"
  pool           = var.pool
  backing_volume = libvirt_volume.base[each.value.host].id
  capacity_bytes = var.disk_gib * 1024 * 1024 * 1024
}

resource "libvirt_cloudinit_iso" "seed" {
  for_each    = var.machines
  host        = each.value.host
  name        = "${each.key}-seed.iso"
  pool        = var.pool
  instance_id = each.key
  hostname    = each.key
  user_data   = "#cloud-config\npackage_update: true\n"
}

resource "libvirt_domain" "machine" {
  for_each     = var.machines
  host         = each.value.host
  name         = each.key
  vcpu         = each.value.vcpu
  memory_mib   = each.value.memory_mib
  autostart    = true
  cloudinit_id = libvirt_cloudinit_iso.seed[each.key].id

  disk {
    volume_id = libvirt_volume.root[each.key].id
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
  value       = { for n, d in libvirt_domain.machine : n => { host = d.host, uuid = d.id, ip = d.ip_address } }
}
