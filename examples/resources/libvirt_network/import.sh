# The network's name. Host entries (dhcp.hosts, dns.hosts) found on the network are
# imported too; omit them from the configuration to leave them unmanaged.
terraform import libvirt_network.lab lab
