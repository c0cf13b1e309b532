# A Ceph RBD pool, logging in with a cephx key kept in a libvirt secret.
resource "libvirt_secret" "ceph" {
  usage_type = "ceph"
  usage_name = "client.libvirt"
  value      = var.ceph_key # base64, as `ceph auth get-key client.libvirt` prints it
}

resource "libvirt_pool" "ceph" {
  name = "ceph-vms"
  type = "rbd"
  source {
    hosts = ["mon1.example.com:6789", "mon2.example.com", "mon3.example.com"]
    name  = "vms" # the Ceph pool
    auth = {
      username  = "libvirt"
      secret_id = libvirt_secret.ceph.id
    }
  }
}

# An iSCSI target through libvirt's own initiator (no open-iscsi on the host): each LUN
# is a volume, e.g. "unit:0:0:1".
resource "libvirt_pool" "san" {
  name = "san"
  type = "iscsi-direct"
  source {
    host      = "192.0.2.20:3260"
    device    = "iqn.2024-01.com.example:storage.lun1"
    initiator = "iqn.2024-01.com.example:kvm1"
  }
}

# Defined only (active = false): nothing is built or started until it is set to true,
# e.g. while the Gluster servers are still being set up.
resource "libvirt_pool" "gluster" {
  name   = "gluster-vms"
  type   = "gluster"
  active = false
  source {
    host = "gluster1.example.com"
    name = "gv0" # the Gluster volume
  }
}

variable "ceph_key" {
  type      = string
  sensitive = true
}
