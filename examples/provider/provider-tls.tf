# A remote host over TLS (libvirtd listening on 16514 with listen_tls). The server
# certificate is verified against ca_file and must name kvm1.example.com; the client
# certificate and key are sent when the daemon asks for them.
provider "libvirt" {
  uri = "qemu+tls://kvm1.example.com/system"

  tls {
    ca_file   = "/etc/terraform/libvirt-pki/cacert.pem"
    cert_file = "/etc/terraform/libvirt-pki/clientcert.pem"
    key_file  = "/etc/terraform/libvirt-pki/clientkey.pem"
  }
}
