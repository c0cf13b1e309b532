package domainxml

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"libvirt.org/go/libvirtxml"
)

// Network disks: a disk QEMU reaches over the network itself (an rbd image, an iSCSI
// LUN, an NBD export, an image on an HTTP server) instead of a file on the host.

// Network disk protocols.
const (
	ProtocolRBD   = "rbd"
	ProtocolISCSI = "iscsi"
	ProtocolNBD   = "nbd"
	ProtocolHTTP  = "http"
	ProtocolHTTPS = "https"
)

// NetworkProtocols are the protocols network_source offers.
var NetworkProtocols = []string{ProtocolRBD, ProtocolISCSI, ProtocolNBD, ProtocolHTTP, ProtocolHTTPS}

// NetworkSource is where a network disk lives.
type NetworkSource struct {
	Protocol string
	// Name is the image: `pool/image` (rbd), `iqn…/lun` (iscsi), the export (nbd), the
	// path on the server (http, https).
	Name  string
	Hosts []NetworkHost
	Auth  *DiskAuth
}

// NetworkHost is one server of a network disk; Port 0 is the protocol's default.
type NetworkHost struct {
	Name string
	Port uint
}

// DiskAuth is how QEMU logs in: a user and the UUID of a libvirt secret holding its key.
type DiskAuth struct {
	Username string
	SecretID string
	// SecretUsage is the secret's usage name when the definition names it that way
	// (<secret type='ceph' usage='client.libvirt secret'/>, as virsh users often write
	// it) instead of by UUID; the provider resolves it to SecretID when it reads. Set,
	// the secret is written by it (secret_usage), else by SecretID.
	SecretUsage string
}

// DefaultPort is the port a protocol's server listens on when none is given (libvirt
// writes it into the definition for http and https).
func DefaultPort(protocol string) uint {
	return map[string]uint{ProtocolRBD: 6789, ProtocolISCSI: 3260, ProtocolNBD: 10809, ProtocolHTTP: 80, ProtocolHTTPS: 443}[protocol]
}

// SecretTypeFor is the usage type of the secret a protocol's auth names; "" for a
// protocol that takes none.
func SecretTypeFor(protocol string) string {
	switch protocol {
	case ProtocolRBD:
		return "ceph"
	case ProtocolISCSI:
		return "iscsi"
	}
	return ""
}

// ValidateNetworkSource checks a network disk's source; what names the disk.
func ValidateNetworkSource(what string, n *NetworkSource) error {
	switch {
	case SecretTypeFor(n.Protocol) == "" && n.Protocol != ProtocolNBD && n.Protocol != ProtocolHTTP && n.Protocol != ProtocolHTTPS:
		return fmt.Errorf("%s: network_source protocol %q is not one of %s", what, n.Protocol, strings.Join(NetworkProtocols, ", "))
	case len(n.Hosts) == 0 && n.Protocol != ProtocolRBD: // rbd: the monitors in ceph.conf
		return fmt.Errorf("%s: network_source needs a host for %s (only rbd may leave them to ceph.conf)", what, n.Protocol)
	case n.Protocol != ProtocolRBD && len(n.Hosts) > 1:
		return fmt.Errorf("%s: only rbd takes more than one host (%s takes one)", what, n.Protocol)
	case n.Name == "" && n.Protocol != ProtocolNBD:
		return fmt.Errorf("%s: network_source needs the name of the %s image", what, n.Protocol)
	case n.Auth != nil && SecretTypeFor(n.Protocol) == "":
		return fmt.Errorf("%s: %s disks take no auth in libvirt (only rbd and iscsi do)", what, n.Protocol)
	case n.Auth != nil && (n.Auth.Username == "" || n.Auth.SecretID == "" && n.Auth.SecretUsage == ""):
		return fmt.Errorf("%s: auth needs both username and secret_id", what)
	}
	for _, h := range n.Hosts {
		if h.Name == "" {
			return fmt.Errorf("%s: a network_source host has no name", what)
		}
	}
	return nil
}

// networkSourceXML is the <source> of a network disk; libvirt takes the auth inside it.
func networkSourceXML(n *NetworkSource) *libvirtxml.DomainDiskSource {
	x := &libvirtxml.DomainDiskSourceNetwork{Protocol: n.Protocol, Name: n.Name}
	for _, h := range n.Hosts {
		host := libvirtxml.DomainDiskSourceHost{Name: h.Name}
		if h.Port != 0 {
			host.Port = strconv.FormatUint(uint64(h.Port), 10)
		}
		x.Hosts = append(x.Hosts, host)
	}
	if a := n.Auth; a != nil {
		x.Auth = &libvirtxml.DomainDiskAuth{Username: a.Username,
			Secret: &libvirtxml.DomainDiskSecret{Type: SecretTypeFor(n.Protocol), UUID: a.SecretID}}
		if a.SecretUsage != "" {
			x.Auth.Secret.UUID, x.Auth.Secret.Usage = "", a.SecretUsage
		}
	}
	return &libvirtxml.DomainDiskSource{Network: x}
}

// parseNetworkSource reads a network disk's source; its auth may sit in <source> or, as
// older definitions have it, beside it.
func parseNetworkSource(d *libvirtxml.DomainDisk) *NetworkSource {
	if d.Source == nil || d.Source.Network == nil {
		return nil
	}
	x := d.Source.Network
	n := &NetworkSource{Protocol: x.Protocol, Name: x.Name}
	for _, h := range x.Hosts {
		port, _ := strconv.ParseUint(h.Port, 10, 32)
		n.Hosts = append(n.Hosts, NetworkHost{Name: h.Name, Port: uint(port)})
	}
	auth := x.Auth
	if auth == nil {
		auth = d.Auth
	}
	if auth != nil {
		n.Auth = &DiskAuth{Username: auth.Username}
		if auth.Secret != nil {
			n.Auth.SecretID = strings.ToLower(auth.Secret.UUID)
			if n.Auth.SecretID == "" {
				n.Auth.SecretUsage = auth.Secret.Usage
			}
		}
	}
	return n
}

// key is the network source as one string, what disks compare by:
// protocol://host:port,host:port/name (user@ before the hosts, with the secret), a port
// left out as the protocol's default.
func (n *NetworkSource) key() string {
	var b strings.Builder
	b.WriteString(n.Protocol + "://")
	if a := n.Auth; a != nil {
		secret := strings.ToLower(a.SecretID)
		if secret == "" {
			secret = "usage=" + a.SecretUsage
		}
		b.WriteString(a.Username + ":" + secret + "@")
	}
	for i, h := range n.Hosts {
		if i > 0 {
			b.WriteString(",")
		}
		port := h.Port
		if port == 0 {
			port = DefaultPort(n.Protocol)
		}
		b.WriteString(h.Name + ":" + strconv.FormatUint(uint64(port), 10))
	}
	return b.String() + "/" + n.Name
}

func isISCSI(n *NetworkSource) bool { return n != nil && n.Protocol == ProtocolISCSI }

// untypedNetworkSource: a network source network_source says exactly: a protocol it
// offers, hosts by name (and port) over TCP, the auth inside <source> (as the provider
// writes it) or beside it, naming the secret of the protocol's usage type by UUID or by
// usage; nothing else (no query, TLS, initiator, snapshot, config, reconnect, ...).
func untypedNetworkSource(x *libvirtxml.DomainDisk) string {
	if x.Source == nil || x.Source.Network == nil {
		if x.Auth != nil {
			return "auth without a network source"
		}
		return ""
	}
	n := x.Source.Network
	switch {
	case !slices.Contains(NetworkProtocols, n.Protocol):
		return "network protocol " + n.Protocol
	case n.Query != "" || n.TLS != "" || n.TLSHostname != "" || n.Identity != nil || n.KnownHosts != nil ||
		n.Initiator != nil || n.Snapshot != nil || n.Config != nil || n.Reconnect != nil:
		return "network source query, tls, identity, knownHosts, initiator, snapshot, config or reconnect"
	case n.Auth != nil && x.Auth != nil:
		return "two auths"
	}
	for _, h := range n.Hosts {
		if _, err := strconv.ParseUint(h.Port, 10, 16); h.Name == "" || h.Transport != "" || h.Socket != "" || h.Port != "" && err != nil {
			return "a network host not by name over TCP"
		}
	}
	if a := x.Auth; a != nil || n.Auth != nil {
		if a == nil {
			a = n.Auth
		}
		if a.Username == "" || a.Secret == nil || a.Secret.Type != SecretTypeFor(n.Protocol) || (a.Secret.UUID == "") == (a.Secret.Usage == "") {
			return "auth"
		}
	}
	return ""
}
