# The guard's domain (make bench, workload G): @N@ stopped domains that use every device
# family the provider has, each defined but never started. Only what needs no host device
# or service (no hostdev, no nwfilter, no port group): what is measured is the plan.
resource "libvirt_volume" "data" {
  count          = @N@
  name           = "${local.prefix}-g${count.index}-data.qcow2"
  pool           = local.pool
  format         = "qcow2"
  capacity_bytes = 64 * 1024 * 1024
}

resource "libvirt_domain" "vm" {
  count       = @N@
  name        = "${local.prefix}-g${count.index}"
  vcpu        = 2
  memory_mib  = 512
  running     = false
  title       = "guard ${count.index}"
  description = "every device family"
  tags        = { bench = "guard" }
  events      = { on_crash = "preserve" }

  cpu = {
    mode             = "host-model"
    iothreads        = 1
    topology         = { sockets = 1, cores = 2, threads = 1 }
    pinning          = { "0" = "0", "1" = "1" }
    emulator_pinning = "0-1"
    numa_cell = [{
      id         = 0
      cpus       = "0-1"
      memory_mib = 512
    }]
  }
  features = { hyperv = ["relaxed", "vapic"] }
  os       = { boot = ["hd", "network"] }

  disk {
    volume_id     = libvirt_volume.data[count.index].id
    cache         = "none"
    io            = "native"
    discard       = "unmap"
    detect_zeroes = "unmap"
    iothread      = 1
    serial        = "data-${count.index}"
    iotune        = { total_iops_sec = 2000, total_bytes_sec = 100 * 1024 * 1024 }
  }

  network_interface {
    network   = local.network
    queues    = 2
    mtu       = 1500
    bandwidth = { inbound = { average_kib = 12500 }, outbound = { average_kib = 12500 } }
  }
  network_interface {
    bridge      = "ovsbr0"
    virtualport = { type = "openvswitch" }
    vlan        = { tags = [10] }
  }
  network_interface {
    direct     = { dev = "eth0", mode = "bridge" }
    link_state = "down"
  }

  filesystem {
    source = "/srv/guard"
    target = "guard"
  }

  graphics = { type = "vnc" }
  devices = {
    video      = [{ model = "virtio" }]
    rng        = [{ rate_bytes = 1024, rate_period_ms = 1000 }]
    watchdog   = [{ model = "i6300esb", action = "reset" }]
    panic      = { model = "isa" }
    memballoon = { model = "virtio", stats_period_sec = 10 }
    sound      = [{ model = "ich9" }]
    input      = [{ type = "tablet", bus = "usb" }]
    serial     = [{ type = "pty" }]
    channel = [{
      type        = "unix"
      path        = "/run/${local.prefix}-g${count.index}.sock"
      target_name = "org.example.guard.0"
    }]
    tpm = { model = "tpm-crb", backend = "emulator", version = "2.0" }
  }
}
