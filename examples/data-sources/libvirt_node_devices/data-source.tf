# The host's PCI devices, e.g. to find a GPU and the audio function next to it.
data "libvirt_node_devices" "pci" {
  capability = "pci"
}

# USB devices: vendor/product ids for a hostdev's `usb`.
data "libvirt_node_devices" "usb" {
  capability = "usb_device"
}

output "nvidia_functions" {
  # Every function of every NVIDIA card (vendor 0x10de), with its IOMMU group: all the
  # devices of a group go to the same guest. Names are empty on hosts without a hwdb,
  # iommu_group is null without an enabled IOMMU.
  value = {
    for d in data.libvirt_node_devices.pci.devices : d.pci_address => {
      product = d.product_name, driver = d.driver, iommu_group = d.iommu_group
    } if d.vendor_id == "0x10de"
  }
}

output "usb_devices" {
  value = [for d in data.libvirt_node_devices.usb.devices : "${d.vendor_id}:${d.product_id} ${d.product_name}"]
}
