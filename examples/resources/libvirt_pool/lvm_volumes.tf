# Volumes in a logical pool: thick unless asked otherwise.
resource "libvirt_pool" "vg" {
  name = "vmdata"
  type = "logical"
  source {
    devices = ["/dev/sdb"]
  }
}

# A thick LV: all 20 GiB are reserved in the volume group.
resource "libvirt_volume" "db" {
  name           = "db"
  pool           = libvirt_pool.vg.name
  format         = "raw"
  capacity_bytes = 20 * 1024 * 1024 * 1024
}

# A sparse LV (allocation_bytes = 0): space is taken as the guest writes. libvirt makes it
# with `lvcreate --virtualsize` (a snapshot of a zero device), not in an LVM thin pool.
resource "libvirt_volume" "scratch" {
  name             = "scratch"
  pool             = libvirt_pool.vg.name
  format           = "raw"
  capacity_bytes   = 50 * 1024 * 1024 * 1024
  allocation_bytes = 0
}
