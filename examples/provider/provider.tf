terraform {
  required_providers {
    libvirt = {
      source = "kvmforge/libvirt"
    }
  }
}

# The local system daemon, through its unix socket. This is also what an empty
# provider block connects to when LIBVIRT_DEFAULT_URI is not set.
provider "libvirt" {
  uri = "qemu:///system"
}
