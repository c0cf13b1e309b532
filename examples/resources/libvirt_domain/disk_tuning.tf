# Disk tuning: a database VM whose data disk bypasses the host cache with native AIO,
# passes discards through, and is throttled. Only a change of `iotune` applies to the
# running domain live; any other tuning change rewrites the definition and restarts it.
resource "libvirt_volume" "db_root" {
  name           = "db-1.qcow2"
  pool           = "default"
  backing_volume = "default/debian-12.qcow2"
}

resource "libvirt_volume" "db_data" {
  name           = "db-1-data.qcow2"
  pool           = "default"
  format         = "qcow2"
  capacity_bytes = 20 * 1024 * 1024 * 1024
}

resource "libvirt_domain" "db" {
  name       = "db-1"
  vcpu       = 2
  memory_mib = 2048
  cpu        = { iothreads = 1 } # the data disk gets an I/O thread of its own

  disk {
    volume_id = libvirt_volume.db_root.id
  }

  disk {
    volume_id     = libvirt_volume.db_data.id
    cache         = "none"
    io            = "native"
    discard       = "unmap"
    detect_zeroes = "unmap"
    queues        = 2
    iothread      = 1
    serial        = "db-data"

    # Limits: change them and apply again; the running VM keeps going.
    iotune = {
      total_iops_sec     = 2000
      total_iops_sec_max = 4000 # bursts
      total_bytes_sec    = 200 * 1024 * 1024
    }
  }

  # A SCSI disk with a fixed WWN (a virtio-scsi controller is added for it), read-only.
  disk {
    path      = "/var/lib/libvirt/images/reference-data.raw"
    bus       = "scsi"
    wwn       = "5000c50015ea71ad"
    read_only = true
  }

  network_interface {
    network = "default"
  }
}
