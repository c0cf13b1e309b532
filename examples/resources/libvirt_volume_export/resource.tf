variable "web_disk_id" {
  description = "id of the volume to export (e.g. libvirt_volume.web_disk.id)"
  type        = string
}

# A standalone, zstd-compressed qcow2 copy of a VM disk, written next to this
# configuration. A running guest keeps running: its disk is copied through a block copy
# job (point-in-time, crash-consistent). Changing `triggers` exports again.
resource "libvirt_volume_export" "web_backup" {
  volume_id   = var.web_disk_id
  path        = "${path.root}/web-1.qcow2.zst"
  format      = "qcow2"
  compression = "zstd"
  triggers = {
    day = formatdate("YYYY-MM-DD", plantimestamp())
  }

  timeouts {
    create = "1h"
  }
}

# A raw image for a tool that wants one (converted on the libvirt host through a temporary
# volume that is removed afterwards); the file goes away with the resource.
resource "libvirt_volume_export" "web_raw" {
  volume_id         = var.web_disk_id
  path              = "${path.root}/web-1.raw.gz"
  format            = "raw"
  compression       = "gzip"
  remove_on_destroy = true
}

output "web_backup_sha256" {
  value = libvirt_volume_export.web_backup.sha256
}
