# A remote host over SSH. Nothing but sshd and libvirtd has to run there: the provider
# speaks SSH itself and opens the daemon's unix socket through the SSH connection.
#
# The host key is verified. Here it is checked against a known_hosts file kept next to
# the configuration, made once with
#   ssh-keyscan -t ed25519 kvm1.example.com > known_hosts
# after comparing `ssh-keygen -lf known_hosts` with the host's real fingerprint.
provider "libvirt" {
  uri = "qemu+ssh://terraform@kvm1.example.com/system"

  ssh {
    private_key_file = "~/.ssh/id_ed25519"
    known_hosts_file = "${path.module}/known_hosts"
  }
}
