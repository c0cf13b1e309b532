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
