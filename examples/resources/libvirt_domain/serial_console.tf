# Serial ports, consoles and channels, in the `devices` group. Null, a domain has one pty
# serial port (which libvirt also shows as its first console, and whose output `virsh
# console` reads) and the guest-agent channel. Changing them rewrites the definition and
# restarts a running domain.
resource "libvirt_domain" "appliance" {
  name       = "appliance-1"
  vcpu       = 1
  memory_mib = 512

  disk {
    path = "/var/lib/libvirt/images/appliance-1.qcow2"
  }

  devices = {
    serial = [
      # ttyS0 on a TCP port of the host (`nc 127.0.0.1 4555`), every byte also kept in a
      # log file on the host. The guest kernel needs console=ttyS0.
      {
        type     = "tcp"
        host     = "127.0.0.1"
        port     = 4555
        mode     = "bind"
        log_file = "/var/log/libvirt/qemu/appliance-1-serial.log"
      },
      # A second serial port (ttyS1) whose output goes to a file.
      { type = "file", path = "/var/log/libvirt/qemu/appliance-1-ttyS1.log" },
    ]

    # A virtio console (the guest's hvc0) on a pty.
    console = [{ type = "pty", target_type = "virtio" }]

    # A named virtio-serial port (/dev/virtio-ports/org.example.telemetry.0 in the guest)
    # on a unix socket of the host, beside the guest-agent channel.
    channel = [{
      type        = "unix"
      path        = "/run/appliance-1-telemetry.sock"
      target_name = "org.example.telemetry.0"
    }]
  }
}
