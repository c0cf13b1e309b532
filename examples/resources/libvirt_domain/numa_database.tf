# A NUMA-pinned database VM on a two-socket host whose NUMA node 0 holds CPUs 0-7 and
# node 1 CPUs 8-15 (see the libvirt_host data source, or `virsh capabilities`): two
# guest NUMA cells of 4 vCPUs and 8 GiB each, every vCPU pinned to a host CPU of the
# matching node, QEMU's own threads kept off them, and the memory in 2 MiB huge pages
# (reserve them on the host first: HugePages_Total in /proc/meminfo).
resource "libvirt_domain" "db" {
  name       = "db-1"
  vcpu       = 8
  memory_mib = 16384

  cpu = {
    mode = "host-passthrough"
    # sockets × dies × cores × threads must be vcpu (or max_vcpu).
    topology = { sockets = 2, cores = 4, threads = 1 }
    feature  = { vmx = "disable" }
    numa_cell = [
      { id = 0, cpus = "0-3", memory_mib = 8192 },
      { id = 1, cpus = "4-7", memory_mib = 8192 },
    ]
    # vCPU -> host CPUs. Adding or changing a pin applies live; removing one restarts.
    pinning = {
      "0" = "1", "1" = "2", "2" = "3", "3" = "4"
      "4" = "9", "5" = "10", "6" = "11", "7" = "12"
    }
    emulator_pinning = "0,8"
  }

  memory_backing = {
    hugepages         = true
    hugepage_size_kib = 2048
    locked            = true
    nosharepages      = true
  }

  disk {
    path = "/var/lib/libvirt/images/db-1.qcow2"
  }
  disk {
    path  = "/dev/mapper/vg0-pgdata"
    cache = "none"
    io    = "native"
  }

  network_interface {
    network = "default"
  }
}
