variable "web_domain_id" {
  description = "The domain to reboot: a libvirt_domain's id (its uuid) or its name."
  type        = string
}

variable "app_version" {
  description = "Version of the application the guest runs; a new one reboots the guest."
  type        = string
}

# Reboot a running guest (guest agent or ACPI, as libvirt chooses) whenever app_version
# changes, and wait up to 3 minutes for it to run again.
resource "libvirt_domain_power" "reboot_web" {
  domain_id = var.web_domain_id
  action    = "reboot"
  timeout   = "3m"

  triggers = {
    app_version = var.app_version
  }
}

# A graceful shutdown that fails (it never forces) when the guest has not stopped within
# 30 seconds. The domain's own `running` stays the source of truth: if "batch-1" is a
# libvirt_domain with running = true, the next apply of it starts the guest again.
resource "libvirt_domain_power" "stop_batch" {
  domain_id = "batch-1"
  action    = "shutdown"
  timeout   = "30s"
}
