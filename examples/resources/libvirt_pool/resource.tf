# A directory pool: the directory is created on apply and removed on destroy (when empty).
resource "libvirt_pool" "images" {
  name        = "images"
  type        = "dir"
  target_path = "/var/lib/libvirt/images-tf"
  autostart   = true
}

# An LVM volume group on two disks, created on apply when the disks carry no signature
# (an existing volume group "vmdata" on them is used as it is).
resource "libvirt_pool" "lvm" {
  name = "vmdata"
  type = "logical"
  source {
    devices = ["/dev/sdb", "/dev/sdc"]
  }
  # target_path is /dev/vmdata.
}

# An NFS export mounted on /mnt/nas-vms. force_destroy lets destroy delete the volumes
# it still holds.
resource "libvirt_pool" "nas" {
  name        = "nas"
  type        = "netfs"
  target_path = "/mnt/nas-vms"
  source {
    host   = "nas.example.com"
    dir    = "/exports/vms"
    format = "nfs"
  }
  force_destroy = true
}

output "images_free_bytes" {
  value = libvirt_pool.images.available_bytes
}
