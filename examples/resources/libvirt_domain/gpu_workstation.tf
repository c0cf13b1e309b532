# A GPU workstation: a whole graphics card (its VGA function and its HDMI audio function,
# which share an IOMMU group) passed through to the guest, found through
# libvirt_node_devices by the card's PCI slot. No emulated graphics: the guest's display
# is the card's own outputs.
#
# The host needs an IOMMU (intel_iommu=on / amd_iommu=on) and vfio-pci; with
# managed = true (the default) libvirt takes the functions from their host driver when
# the domain starts and gives them back when it stops.
#
# Hugepages: a guest with a passed-through device has all its memory pinned, so backing
# it with hugepages is usual. That is the memory_backing setting, which comes with
# another change; reserve the pages on the host (vm.nr_hugepages) meanwhile.

variable "gpu_slot" {
  description = "The GPU's PCI bus and slot as libvirt names it, e.g. pci_0000_01_00 for 0000:01:00.x."
  type        = string
  default     = "pci_0000_01_00"
}

data "libvirt_node_devices" "gpu" {
  capability  = "pci"
  name_prefix = "${var.gpu_slot}_"
}

locals {
  # Every function of the card: .0 is the GPU, .1 its audio device.
  gpu_functions = [for d in data.libvirt_node_devices.gpu.devices : d.pci_address]
}

resource "libvirt_volume" "workstation" {
  name           = "workstation.qcow2"
  pool           = "default"
  capacity_bytes = 107374182400
}

resource "libvirt_domain" "workstation" {
  name       = "gpu-workstation"
  vcpu       = 8
  memory_mib = 16384
  os         = { machine = "q35" }
  firmware   = "uefi"
  cpu        = { mode = "host-passthrough" }
  graphics   = { type = "none" }

  disk {
    volume_id = libvirt_volume.workstation.id
  }

  network_interface {
    network = "default"
  }

  dynamic "hostdev" {
    for_each = local.gpu_functions
    content {
      pci = hostdev.value
    }
  }

  lifecycle {
    precondition {
      condition     = length(local.gpu_functions) > 0
      error_message = "No PCI device ${var.gpu_slot}_* on this host: see data.libvirt_node_devices."
    }
  }
}
