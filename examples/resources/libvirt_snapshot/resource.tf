# A memory snapshot of a running domain (by name or UUID): its disks, RAM and device
# state, taken atomically as an internal qcow2 snapshot. Reverting brings the guest
# back running where it was.
resource "libvirt_snapshot" "before_upgrade" {
  domain_id   = "web"
  name        = "before-upgrade"
  description = "before the 2.0 upgrade"
  memory      = true

  timeouts {
    create = "15m" # the RAM is written out: slow without KVM
  }
}

# A disk-only snapshot: the domain must be shut off (libvirt_domain.running = false).
# The name defaults to tfsnap-<UTC timestamp>.
resource "libvirt_snapshot" "golden" {
  domain_id = "builder"
}
