data "libvirt_host" "this" {}

locals {
  # "kvm" where the host offers hardware acceleration, "qemu" (software emulation)
  # where it does not: the same choice libvirt_domain makes when `type` is unset.
  domain_type = data.libvirt_host.this.default_domain_type

  # firmware_types holds libvirt's firmware auto-selection values ("bios", "efi").
  uefi = contains(data.libvirt_host.this.firmware_types, "efi")
}

# Warn at plan time when the host cannot boot UEFI guests.
check "host_offers_uefi" {
  assert {
    condition     = local.uefi
    error_message = "libvirt on ${data.libvirt_host.this.hostname} offers no UEFI firmware (firmware_types = ${jsonencode(data.libvirt_host.this.firmware_types)}): install OVMF / edk2 on the host."
  }
}

output "host" {
  value = {
    hostname    = data.libvirt_host.this.hostname
    arch        = data.libvirt_host.this.arch
    domain_type = local.domain_type
    uefi        = local.uefi
    libvirt     = data.libvirt_host.this.libvirt_version
    hypervisor  = "${data.libvirt_host.this.hypervisor_type} ${data.libvirt_host.this.hypervisor_version}"
  }
}
