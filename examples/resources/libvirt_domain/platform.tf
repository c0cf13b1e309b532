# Title, description and tags describe the domain (virsh list --title shows the title;
# the libvirt_domains data source lists the tags). Changing them never restarts it.
# events says what libvirt does when the guest powers off, reboots or crashes: here a
# crash leaves the domain paused for inspection.
resource "libvirt_domain" "db" {
  name       = "db-1"
  vcpu       = 2
  memory_mib = 4096

  title       = "Postgres primary"
  description = "Orders database. Owner: data team."
  tags = {
    env  = "prod"
    team = "data"
  }

  events = {
    on_poweroff = "destroy"
    on_reboot   = "restart"
    on_crash    = "preserve"
  }

  # Try the network (PXE) first, then the disk; show the firmware's boot menu for 5 s.
  # (Not with boot_order on a disk or NIC: one or the other.)
  os = {
    boot      = ["network", "hd"]
    boot_menu = { enabled = true, timeout_ms = 5000 }
  }

  # Features left out keep what the domain has (acpi and apic for a domain made here);
  # state holds only the ones written here.
  features = {
    smm    = true
    hyperv = ["relaxed", "vapic", "spinlocks"]
  }

  disk {
    path = "/var/lib/libvirt/images/db-1.qcow2"
  }

  network_interface {
    network = "default"
  }
}
