# Check that a domain fits the host before anything is made: the plan fails with the
# message below when it does not. memory_free_bytes is read on every plan.
variable "memory_mib" {
  type    = number
  default = 2048
}

data "libvirt_host" "this" {}

resource "libvirt_domain" "vm" {
  name       = "vm1"
  vcpu       = 2
  memory_mib = var.memory_mib

  lifecycle {
    precondition {
      condition     = var.memory_mib * 1048576 <= data.libvirt_host.this.memory_free_bytes
      error_message = "vm1 needs ${var.memory_mib} MiB; ${data.libvirt_host.this.hostname} has ${floor(data.libvirt_host.this.memory_free_bytes / 1048576)} MiB free."
    }
    precondition {
      condition     = 2 <= data.libvirt_host.this.cpus
      error_message = "vm1 wants 2 vCPUs; ${data.libvirt_host.this.hostname} has ${data.libvirt_host.this.cpus} CPUs."
    }
  }
}

# Free 2 MiB huge pages per NUMA cell, e.g. to place a domain with memory_backing.hugepages.
output "free_2m_hugepages_by_cell" {
  value = {
    for cell in data.libvirt_host.this.numa_cells :
    cell.id => one([for p in cell.hugepages : p.free if p.size_kib == 2048])
  }
}
