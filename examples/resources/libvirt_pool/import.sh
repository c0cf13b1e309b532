# The pool's name.
terraform import libvirt_pool.images images
