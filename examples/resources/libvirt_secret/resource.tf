# A Ceph client key for rbd disks, given write-only: it never lands in plan or state.
variable "ceph_key" {
  type      = string
  sensitive = true
  ephemeral = true # Terraform 1.10+: the value is not kept in the plan either
}

resource "libvirt_secret" "ceph" {
  usage_type       = "ceph"
  usage_name       = "client.libvirt secret"
  description      = "rbd client.libvirt"
  value_wo         = var.ceph_key # as `ceph auth get-key client.libvirt` prints it
  value_wo_version = 1            # bump after rotating the key
}

# A LUKS passphrase for an encrypted volume, kept (sensitive) in state.
resource "libvirt_secret" "luks" {
  usage_type = "volume"
  usage_name = "/var/lib/libvirt/images/data.luks.qcow2"
  value      = var.luks_passphrase
  private    = true # libvirt never shows it again
}

variable "luks_passphrase" {
  type      = string
  sensitive = true
}
