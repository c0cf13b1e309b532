# Guest devices, in the `devices` group. Each kind left null is not managed: the domain
# keeps what its definition has (libvirt's own defaults: a ps2 mouse and keyboard, a
# virtio memballoon, a cirrus video card when there is a graphical console), and none of
# it enters state. Changing one rewrites the definition and restarts a running domain.
resource "libvirt_domain" "desktop" {
  name       = "desktop-1"
  vcpu       = 2
  memory_mib = 2048

  disk {
    path = "/var/lib/libvirt/images/desktop-1.qcow2"
  }

  network_interface {
    network = "default"
  }

  graphics = { type = "spice" }

  devices = {
    # virtio-gpu with two screens; accel3d needs a render node on the host.
    video = [{ model = "virtio", heads = 2 }]

    # /dev/hwrng in the guest, fed from the host's /dev/urandom, at most 1 KiB a second.
    rng = [{ rate_bytes = 1024, rate_period_ms = 1000 }]

    # Reset the guest when its watchdog daemon stops petting the timer.
    watchdog = [{ model = "i6300esb", action = "reset" }]

    # The guest reports a kernel panic to the host.
    panic = { model = "isa" }

    # AF_VSOCK between host and guest; libvirt picks a free context id at each start.
    vsock = {}

    # Memory statistics every 10 s (virsh dommemstat), deflate under memory pressure.
    memballoon = { model = "virtio", stats_period_sec = 10, autodeflate = true }

    sound = [{ model = "ich9" }]

    # An absolute pointer, so the console cursor follows the mouse.
    input = [{ type = "tablet", bus = "usb" }]
  }
}
