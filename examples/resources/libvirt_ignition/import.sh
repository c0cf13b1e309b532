# By pool and name (the content is downloaded back into state):
terraform import libvirt_ignition.node default/node-1.ign

# Or by the volume key (for directory pools, its path on the host):
terraform import libvirt_ignition.node /var/lib/libvirt/images/node-1.ign
