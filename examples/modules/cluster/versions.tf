terraform {
  required_version = ">= 1.5"

  required_providers {
    libvirt = {
      source = "kvmforge/libvirt"
    }
  }
}
