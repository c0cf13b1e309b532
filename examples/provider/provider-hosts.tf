# Two hypervisors from one provider block. The provider's own uri is the host named
# "default"; `hosts` names the others. Every resource and data source then says where it
# lives with `host` (null: "default"), e.g. `host = "kvm2"` or `host = each.value.host`.
#
# The provider reaches both over SSH; the hosts' libvirt daemons reach each other for a
# live migration (peer to peer) over a private network, by `peer_uri`. Unset ssh fields of
# a host are the provider's.
provider "libvirt" {
  uri      = "qemu+ssh://terraform@kvm1.example.com/system"
  peer_uri = "qemu+tcp://10.0.0.1/system" # how kvm2's libvirtd reaches kvm1's

  ssh {
    private_key_file = "~/.ssh/id_ed25519"
    known_hosts_file = "${path.module}/known_hosts"
  }

  hosts = {
    kvm2 = {
      uri      = "qemu+ssh://terraform@kvm2.example.com/system"
      peer_uri = "qemu+tcp://10.0.0.2/system" # how kvm1's libvirtd reaches kvm2's
    }
  }
}

data "libvirt_host" "kvm2" {
  host = "kvm2"
}
