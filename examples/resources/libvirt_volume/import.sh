# By pool and name:
terraform import libvirt_volume.web_disk default/web-1.qcow2

# Or by the volume key (for directory pools, its path on the host):
terraform import libvirt_volume.web_disk /var/lib/libvirt/images/web-1.qcow2
