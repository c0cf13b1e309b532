variable "debian_sha256" {
  description = "sha256 of the Debian cloud image (sha256sum of the file)"
  type        = string
}

# A base image, downloaded once and streamed into the pool; the checksum is verified
# while streaming (a mismatch fails the apply and leaves no volume behind).
resource "libvirt_volume" "debian" {
  name            = "debian-12-generic-amd64.qcow2"
  pool            = "default"
  source_url      = "https://cloud.debian.org/images/cloud/bookworm/latest/debian-12-generic-amd64.qcow2"
  source_checksum = "sha256:${var.debian_sha256}"
}

# A VM disk: a copy-on-write overlay of the base image, 20 GiB. Raising capacity_bytes
# later grows it in place (online, through the running domain that uses it).
resource "libvirt_volume" "web_disk" {
  name           = "web-1.qcow2"
  pool           = "default"
  backing_volume = libvirt_volume.debian.id
  capacity_bytes = 20 * 1024 * 1024 * 1024
}

# A full, independent copy of the base image (its backing chain flattened).
resource "libvirt_volume" "golden" {
  name       = "golden.qcow2"
  pool       = "default"
  clone_from = libvirt_volume.debian.id
}

# An image file on the machine running Terraform (checked at plan time: a path that
# cannot be read is an error before anything is created).
variable "appliance_image" {
  description = "Path of the appliance's qcow2 image on this machine."
  type        = string
}

resource "libvirt_volume" "local" {
  name        = "appliance.qcow2"
  pool        = "default"
  source_file = var.appliance_image
}

# An empty data disk of 10 GiB.
resource "libvirt_volume" "data" {
  name           = "web-1-data.qcow2"
  pool           = "default"
  capacity_bytes = 10 * 1024 * 1024 * 1024

  timeouts {
    create = "5m"
  }
}

# An installer CD image.
resource "libvirt_volume" "installer" {
  name       = "netinst.iso"
  pool       = "default"
  source_url = "file:///srv/iso/debian-12-amd64-netinst.iso"
  format     = "iso"
}

# Encrypted volumes (LUKS), each with its passphrase in a libvirt_secret given
# write-only (never in plan or state). Name the secret after the volume's path: libvirt
# finds a volume's secret by that once it rescans the pool. A libvirt_domain disk with
# volume_id = libvirt_volume.vault.id needs nothing more: it takes the encryption from
# the volume.
variable "vault_passphrase" {
  type      = string
  sensitive = true
  ephemeral = true
}

resource "libvirt_secret" "vault" {
  usage_type       = "volume"
  usage_name       = "/var/lib/libvirt/images/vault.qcow2"
  value_wo         = var.vault_passphrase
  value_wo_version = 1
}

# An empty encrypted data disk of 10 GiB.
resource "libvirt_volume" "vault" {
  name           = "vault.qcow2"
  pool           = "default"
  capacity_bytes = 10 * 1024 * 1024 * 1024
  encryption     = { format = "luks", secret_id = libvirt_secret.vault.id }
}

# An image made encrypted: an upload cannot be (it would overwrite the LUKS header), so
# copy the plain base image into an encrypted volume.
resource "libvirt_secret" "golden_luks" {
  usage_type       = "volume"
  usage_name       = "/var/lib/libvirt/images/golden-luks.qcow2"
  value_wo         = var.vault_passphrase
  value_wo_version = 1
}

resource "libvirt_volume" "golden_luks" {
  name       = "golden-luks.qcow2"
  pool       = "default"
  clone_from = libvirt_volume.debian.id
  encryption = { format = "luks", secret_id = libvirt_secret.golden_luks.id }
}

# A compressed cloud image, decompressed while it streams into the pool (never stored
# whole). source_compression = "auto" (the default) tells it by its magic bytes; the
# checksum is the one published for the compressed file, as downloaded. capacity_bytes
# is the image's own virtual size (its qcow2 header).
variable "fedora_xz_sha256" {
  description = "sha256 of the .qcow2.xz file as published"
  type        = string
}

resource "libvirt_volume" "fedora" {
  name               = "fedora.qcow2"
  pool               = "default"
  source_url         = "https://example.com/images/fedora.qcow2.xz"
  source_compression = "auto"
  source_checksum    = "sha256:${var.fedora_xz_sha256}"
}

# A raw disk image compressed with zstd: its length is only known once it is all
# decompressed, which a directory pool handles (the file grows as it is written); on a
# pool of fixed-size devices (logical) set capacity_bytes.
resource "libvirt_volume" "appliance_raw" {
  name               = "appliance.raw"
  pool               = "default"
  format             = "raw"
  source_url         = "https://example.com/images/appliance.raw.zst"
  source_compression = "zstd"
}

# A volume the qemu user (uid/gid 64055 on Debian) may read, but not others. libvirt
# cannot change permissions later: changing them replaces the volume.
resource "libvirt_volume" "shared" {
  name           = "shared.qcow2"
  pool           = "default"
  capacity_bytes = 1024 * 1024 * 1024
  permissions = {
    owner = 0
    group = 64055
    mode  = "0640"
  }
}
