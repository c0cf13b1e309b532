resource "libvirt_snapshot" "before_upgrade" {
  domain_id = "web"
  name      = "before-upgrade"
  memory    = true
}

# Roll the domain back to the snapshot: it comes back running, with the RAM it had.
# Changing a trigger reverts again; destroying this resource does nothing on the host.
resource "libvirt_snapshot_revert" "rollback" {
  snapshot_id = libvirt_snapshot.before_upgrade.id

  triggers = {
    attempt = "1"
  }
}
