# ---- inputs ----

variable "machine_count" {
  description = "How many machines to run. Machines are keyed by name (<name_prefix>-<index>), so lowering the count removes the highest indexes only."
  type        = number
  default     = 1

  validation {
    condition     = var.machine_count >= 0 && floor(var.machine_count) == var.machine_count
    error_message = "machine_count must be a whole number, 0 or more."
  }
}

variable "namespace" {
  description = "Cluster API namespace: the first part of every domain name (<namespace>-<name>-<hash>)."
  type        = string

  validation {
    condition     = length(trimspace(var.namespace)) > 0
    error_message = "namespace must not be empty."
  }
}

variable "name_prefix" {
  description = "Machines are named <name_prefix>-0, <name_prefix>-1, ...; the name is also the guest's hostname."
  type        = string

  validation {
    condition     = can(regex("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", var.name_prefix))
    error_message = "name_prefix must be lower-case letters, digits and '-', as hostnames are."
  }
}

variable "vcpu" {
  description = "Virtual CPUs per machine. Growing it up to twice the value a machine was created with applies live."
  type        = number
  default     = 1
}

variable "memory_mib" {
  description = "Memory per machine in MiB. Changes up to twice the value a machine was created with apply live."
  type        = number
  default     = 1024
}

variable "disk_gib" {
  description = "Root disk size per machine in GiB (grows online; cannot shrink)."
  type        = number
  default     = 20
}

variable "image" {
  description = "Name of the base image volume in base_pool (each machine's root disk is a copy-on-write overlay of it)."
  type        = string
}

variable "user_data" {
  description = "Bootstrap data every machine gets as cloud-init user-data (e.g. a kubeadm join script). Changing it replaces the machines."
  type        = string
  default     = null
  sensitive   = true
}

variable "network" {
  description = "libvirt network the machines are on; each gets a DHCP reservation in it."
  type        = string
}

variable "base_pool" {
  description = "Storage pool holding image."
  type        = string
}

variable "domain_pool" {
  description = "Storage pool for the machines' root disks and cloud-init seeds."
  type        = string
}

variable "lease_timeout" {
  description = "How long creating a machine waits for its DHCP lease (Go duration)."
  type        = string
  default     = "5m"
}

# ---- machines ----

# The network and pools must exist and be active before any machine is made: the
# precondition below fails the plan with libvirt_cluster's message (which object is
# missing or inactive, and how to start it) instead of a half-made cluster.
data "libvirt_cluster" "this" {
  network     = var.network
  base_pool   = var.base_pool
  domain_pool = var.domain_pool
}

locals {
  names = [for i in range(var.machine_count) : "${var.name_prefix}-${i}"]
}

resource "libvirt_cluster_machine" "this" {
  for_each = toset(local.names)

  namespace     = var.namespace
  name          = each.key
  network       = var.network
  base_pool     = var.base_pool
  domain_pool   = var.domain_pool
  image         = var.image
  vcpu          = var.vcpu
  memory_mib    = var.memory_mib
  disk_gib      = var.disk_gib
  user_data     = var.user_data
  lease_timeout = var.lease_timeout

  lifecycle {
    precondition {
      condition     = data.libvirt_cluster.this.ready
      error_message = "The cluster's infrastructure is not ready (${coalesce(data.libvirt_cluster.this.reason, "unknown")}): ${data.libvirt_cluster.this.message}"
    }
  }
}

# ---- outputs ----

output "names" {
  description = "Machine names (the guests' hostnames), in index order."
  value       = local.names
}

output "domain_names" {
  description = "libvirt domain names (<namespace>-<name>-<hash>), in index order."
  value       = [for n in local.names : libvirt_cluster_machine.this[n].domain_name]
}

output "ips" {
  description = "The address reserved for each machine, in index order."
  value       = [for n in local.names : libvirt_cluster_machine.this[n].ip]
}

output "provider_ids" {
  description = "Cluster API provider ids (libvirt://<uid>), in index order."
  value       = [for n in local.names : libvirt_cluster_machine.this[n].provider_id]
}

output "machines" {
  description = "Every machine by name: domain name, uid, MAC and reserved IP."
  value = {
    for n in local.names : n => {
      domain_name = libvirt_cluster_machine.this[n].domain_name
      uid         = libvirt_cluster_machine.this[n].uid
      mac         = libvirt_cluster_machine.this[n].mac
      ip          = libvirt_cluster_machine.this[n].ip
    }
  }
}
