# Import by UUID (virsh secret-list).
terraform import libvirt_secret.ceph 6b1c3a5e-0d4f-4c2a-9e1b-1234567890ab
