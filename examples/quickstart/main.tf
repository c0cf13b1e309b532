# Quickstart: connect to a libvirt host and show what it offers.
# `make quickstart` applies this against the local test host. The core-path resources
# (volume, cloud-init ISO, domain) extend it to boot the tiny guest and print its IP.

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

provider "libvirt" {
  uri = var.uri
}

data "libvirt_host" "this" {}

output "host" {
  description = "What the host offers."
  value = {
    hostname            = data.libvirt_host.this.hostname
    arch                = data.libvirt_host.this.arch
    libvirt_version     = data.libvirt_host.this.libvirt_version
    hypervisor_version  = data.libvirt_host.this.hypervisor_version
    default_domain_type = data.libvirt_host.this.default_domain_type
    firmware_types      = data.libvirt_host.this.firmware_types
  }
}
