# By pool and name (the seed is downloaded and its files read back into state):
terraform import libvirt_cloudinit_iso.web default/web-1-cloudinit.iso

# Or by the volume key (for directory pools, its path on the host):
terraform import libvirt_cloudinit_iso.web /var/lib/libvirt/images/web-1-cloudinit.iso
