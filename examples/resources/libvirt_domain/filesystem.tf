# Host directories shared with the guest. Inside the guest:
#   mount -t virtiofs code /srv/code
#   mount -t 9p -o trans=virtio,version=9p2000.L datasets /srv/datasets
resource "libvirt_domain" "dev" {
  name       = "dev-1"
  vcpu       = 2
  memory_mib = 2048

  disk {
    path = "/var/lib/libvirt/images/dev-1.qcow2"
  }

  network_interface {
    network = "default"
  }

  # virtiofs (the default): fast, read-write. The provider gives the domain the shared
  # (memfd) memory virtiofsd needs.
  filesystem {
    source = "/home/alice/src"
    target = "code"
  }

  # 9p, read-only: libvirt 9.0 has no read-only virtiofs.
  filesystem {
    source      = "/srv/datasets"
    target      = "datasets"
    driver      = "9p"
    read_only   = true
    access_mode = "mapped"
  }
}
