# Wait for cloud-init to finish before anything depends on the VM. The agent must answer
# first; `cloud-init status --wait` blocks until cloud-init is done and exits non-zero
# when it failed, which fails the apply with its output and the console's last lines.
resource "libvirt_domain" "app" {
  name       = "app-1"
  vcpu       = 2
  memory_mib = 2048

  disk {
    path = "/var/lib/libvirt/images/app-1.qcow2"
  }

  network_interface {
    network = "default"
    wait_for_ip {
      timeout = "3m"
    }
  }

  wait_for_ready = {
    timeout = "10m"
    command = ["cloud-init", "status", "--wait"]
  }
}
