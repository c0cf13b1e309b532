package libvirt

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"github.com/google/uuid"
	"libvirt.org/go/libvirtxml"
)

// Domain is a handle on a libvirt domain.
type Domain = golibvirt.Domain

// DomainUndefineAll removes a domain's definition with everything libvirt keeps for it:
// the UEFI nvram varstore, snapshot and checkpoint metadata, a managed save image.
const DomainUndefineAll = golibvirt.DomainUndefineNvram | golibvirt.DomainUndefineSnapshotsMetadata |
	golibvirt.DomainUndefineManagedSave | golibvirt.DomainUndefineCheckpointsMetadata

// LookupDomainOn finds a domain by UUID (when id parses as one) or by name.
func LookupDomainOn(l *golibvirt.Libvirt, id string) (Domain, error) {
	if u, err := uuid.Parse(id); err == nil && len(id) == 36 {
		d, err := l.DomainLookupByUUID(golibvirt.UUID(u))
		if err == nil {
			return d, nil
		}
		var lerr golibvirt.Error
		if !errors.As(err, &lerr) || golibvirt.ErrorNumber(lerr.Code) != golibvirt.ErrNoDomain {
			return d, err
		}
		// A name that looks like a UUID: try it as a name.
	}
	return l.DomainLookupByName(id)
}

// LookupDomain finds a domain by UUID or name; a missing one is ErrNotFound.
func (c *Client) LookupDomain(ctx context.Context, id string) (Domain, error) {
	var d Domain
	err := c.Read(ctx, "look up domain "+id, func(l *golibvirt.Libvirt) (err error) {
		d, err = LookupDomainOn(l, id)
		return err
	})
	return d, err
}

// UUIDString formats a domain's UUID.
func UUIDString(d Domain) string { return uuid.UUID(d.UUID).String() }

// DomainStatus is one look at a domain: its persistent definition, its state, and when
// it runs its live definition.
type DomainStatus struct {
	Domain    Domain
	State     string // running, paused, shutoff, ...
	Active    bool   // a QEMU process exists
	Autostart bool
	XML       string // persistent (inactive) definition: what the user controls
	LiveXML   string // live definition when active: ports, agent state, nvram path
}

// DomainStateName maps libvirt's state numbers to the names virsh prints.
func DomainStateName(s int32) string {
	switch golibvirt.DomainState(s) {
	case golibvirt.DomainRunning:
		return "running"
	case golibvirt.DomainBlocked:
		return "blocked"
	case golibvirt.DomainPaused:
		return "paused"
	case golibvirt.DomainShutdown:
		return "shutdown"
	case golibvirt.DomainShutoff:
		return "shutoff"
	case golibvirt.DomainCrashed:
		return "crashed"
	case golibvirt.DomainPmsuspended:
		return "pmsuspended"
	}
	return "nostate"
}

// GetDomainStatus reads a domain in one connection turn (a handful of quick RPCs).
func (c *Client) GetDomainStatus(ctx context.Context, id string) (*DomainStatus, error) {
	st := &DomainStatus{}
	err := c.Read(ctx, "read domain "+id, func(l *golibvirt.Libvirt) error {
		d, err := LookupDomainOn(l, id)
		if err != nil {
			return err
		}
		st.Domain = d
		state, _, err := l.DomainGetState(d, 0)
		if err != nil {
			return err
		}
		st.State = DomainStateName(state)
		st.Active = st.State != "shutoff" && st.State != "nostate"
		auto, err := l.DomainGetAutostart(d)
		if err != nil {
			return err
		}
		st.Autostart = auto != 0
		if st.XML, err = l.DomainGetXMLDesc(d, golibvirt.DomainXMLInactive); err != nil {
			return err
		}
		if st.Active {
			if st.LiveXML, err = l.DomainGetXMLDesc(d, 0); err != nil {
				return err
			}
			// The running id changes on every start.
			if fresh, err := l.DomainLookupByUUID(d.UUID); err == nil {
				st.Domain = fresh
			}
		}
		return nil
	})
	return st, err
}

// DefineDomain writes a persistent definition (new, or replacing the one with its UUID).
//
// A definition that names its UUID is idempotent: defining it again, whether or not the
// first attempt reached the daemon, ends with the same one domain. So when the connection
// breaks under such a define (the daemon restarting, the link dropping between the define
// and its answer), it is sent again once the daemon answers, instead of failing with an
// unknown outcome; the domain is never made twice. Without a UUID, libvirt picks one: a
// repeat after a lost answer would be refused ("already exists with uuid ..."), so such a
// define is tried once. Callers creating domains therefore choose the UUID themselves.
func (c *Client) DefineDomain(ctx context.Context, name, xml string) (Domain, error) {
	var d Domain
	write := c.Write
	if definesUUID(xml) {
		write = c.writeSettled
	}
	err := write(ctx, "define domain "+name, func(l *golibvirt.Libvirt) (err error) {
		d, err = l.DomainDefineXMLFlags(xml, golibvirt.DomainDefineValidate)
		return err
	})
	return d, err
}

// definesUUID reports whether a domain XML names its UUID.
func definesUUID(xml string) bool {
	var d libvirtxml.Domain
	return d.Unmarshal(xml) == nil && d.UUID != ""
}

// StartDomain starts a defined domain; one already running is left alone.
func (c *Client) StartDomain(ctx context.Context, id string) error {
	return c.Write(ctx, "start domain "+id, func(l *golibvirt.Libvirt) error {
		d, err := LookupDomainOn(l, id)
		if err != nil {
			return err
		}
		err = l.DomainCreate(d)
		if HasCode(classify("", "", err), golibvirt.ErrOperationInvalid) && isActive(l, d) {
			return nil
		}
		return err
	})
}

func isActive(l *golibvirt.Libvirt, d Domain) bool {
	a, err := l.DomainIsActive(d)
	return err == nil && a == 1
}

// SetDomainAutostart sets whether libvirtd starts the domain when it starts.
func (c *Client) SetDomainAutostart(ctx context.Context, id string, on bool) error {
	return c.Write(ctx, "set autostart of domain "+id, func(l *golibvirt.Libvirt) error {
		d, err := LookupDomainOn(l, id)
		if err != nil {
			return err
		}
		v := int32(0)
		if on {
			v = 1
		}
		return l.DomainSetAutostart(d, v)
	})
}

// UndefineDomain removes a stopped domain's definition with its nvram and metadata.
func (c *Client) UndefineDomain(ctx context.Context, id string) error {
	return c.Write(ctx, "undefine domain "+id, func(l *golibvirt.Libvirt) error {
		d, err := LookupDomainOn(l, id)
		if err != nil {
			return err
		}
		return l.DomainUndefineFlags(d, DomainUndefineAll)
	})
}

// Address is one IP address of a guest interface.
type Address struct {
	IP     string
	Prefix uint32
}

// UsableAddress is what users want to see: not loopback, not link-local, not unspecified.
func UsableAddress(ip string) bool {
	a := net.ParseIP(strings.SplitN(ip, "%", 2)[0])
	return a != nil && !a.IsLoopback() && !a.IsLinkLocalUnicast() && !a.IsLinkLocalMulticast() && !a.IsUnspecified()
}

// NetworkLeases returns the DHCP leases of a libvirt network by lower-case MAC. A missing
// network is ErrNotFound.
func (c *Client) NetworkLeases(ctx context.Context, network string) (map[string][]Lease, error) {
	out := map[string][]Lease{}
	err := c.Read(ctx, "read DHCP leases of network "+network, func(l *golibvirt.Libvirt) error {
		n, err := l.NetworkLookupByName(network)
		if err != nil {
			return err
		}
		leases, _, err := l.NetworkGetDhcpLeases(n, nil, 1, 0)
		if err != nil {
			return err
		}
		for _, ls := range leases {
			if len(ls.Mac) == 0 {
				continue
			}
			mac := strings.ToLower(ls.Mac[0])
			le := Lease{MAC: mac, IP: ls.Ipaddr, Prefix: ls.Prefix, Expiry: time.Unix(ls.Expirytime, 0)}
			if len(ls.Hostname) > 0 {
				le.Hostname = ls.Hostname[0]
			}
			out[mac] = append(out[mac], le)
		}
		return nil
	})
	return out, err
}

// Lease is one DHCP lease of a libvirt network.
type Lease struct {
	MAC      string
	IP       string
	Prefix   uint32
	Hostname string
	Expiry   time.Time
}

// AgentAddresses asks the guest agent for the guest's interfaces, by lower-case MAC.
// Callers bound the wait with ctx (a refresh gives it about a second).
func (c *Client) AgentAddresses(ctx context.Context, id string) (map[string][]Address, error) {
	out := map[string][]Address{}
	// Write, not Read: a deadline that closes the connection must not be retried.
	err := c.Write(ctx, "ask the guest agent of domain "+id+" for addresses", func(l *golibvirt.Libvirt) error {
		d, err := LookupDomainOn(l, id)
		if err != nil {
			return err
		}
		ifaces, err := l.DomainInterfaceAddresses(d, uint32(golibvirt.DomainInterfaceAddressesSrcAgent), 0)
		if err != nil {
			return err
		}
		for _, i := range ifaces {
			if len(i.Hwaddr) == 0 {
				continue
			}
			mac := strings.ToLower(i.Hwaddr[0])
			for _, a := range i.Addrs {
				out[mac] = append(out[mac], Address{IP: a.Addr, Prefix: a.Prefix})
			}
		}
		return nil
	})
	return out, err
}

// DiskSource resolves what a domain disk points at: a volume reference (key or
// pool/name) or a path. It returns the path and the image format (the volume's own
// format when libvirt knows the file as a volume, else guessed from the file name).
func (c *Client) DiskSource(ctx context.Context, volumeID, path string) (string, string, error) {
	op := "look up disk " + path
	if volumeID != "" {
		op = "look up volume " + volumeID
	}
	var format string
	err := c.Read(ctx, op, func(l *golibvirt.Libvirt) error {
		var vol golibvirt.StorageVol
		var err error
		if volumeID != "" {
			ref, perr := ParseVolumeRef(volumeID)
			if perr != nil {
				return perr
			}
			if vol, err = LookupVolume(l, ref); err != nil {
				return err
			}
			if path, err = l.StorageVolGetPath(vol); err != nil {
				return err
			}
		} else if vol, err = l.StorageVolLookupByPath(path); err != nil {
			var lerr golibvirt.Error
			if errors.As(err, &lerr) && golibvirt.ErrorNumber(lerr.Code) == golibvirt.ErrNoStorageVol {
				// No running pool holds the file. One of a stopped pool would be taken for a
				// file outside libvirt and its format guessed: say the pool is stopped instead.
				if perr := inactivePoolHolding(l, path); perr != nil {
					return perr
				}
				format = formatFromName(path)
				return nil
			}
			return err
		}
		text, err := l.StorageVolGetXMLDesc(vol, 0)
		if err != nil {
			return err
		}
		var v libvirtxml.StorageVolume
		if err := v.Unmarshal(text); err != nil {
			return fmt.Errorf("parse volume XML: %w", err)
		}
		if v.Target != nil && v.Target.Format != nil && v.Target.Format.Type != "" {
			format = v.Target.Format.Type
		} else {
			format = formatFromName(path)
		}
		if format == "iso" {
			format = "raw"
		}
		return nil
	})
	return path, format, err
}

func formatFromName(p string) string {
	switch strings.ToLower(filepath.Ext(p)) {
	case ".qcow2", ".qcow":
		return "qcow2"
	case ".vmdk":
		return "vmdk"
	}
	return "raw"
}
