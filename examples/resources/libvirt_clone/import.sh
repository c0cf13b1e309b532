# The clone's domain name or UUID; mode, pool and source are read back from the record
# libvirt_clone keeps in the domain's <metadata>.
terraform import libvirt_clone.web2 web2
