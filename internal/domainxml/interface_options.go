package domainxml

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"libvirt.org/go/libvirtxml"
)

// NIC options: what a `network_interface` sets beyond its source, MAC and model (VLANs,
// virtual ports, MTU, queues, link state, bandwidth, boot order, ROM, packet filter,
// port group, rx-filter trust). Each is read from the inactive XML, so what a running
// domain or a network's port group adds (port ids, inherited VLANs) is never drift.

// Virtual port types (the XML's type attribute).
const (
	VirtualPortOVS = "openvswitch"
	VirtualPortQbh = "802.1Qbh"
	VirtualPortQbg = "802.1Qbg"
	DirectModeVEPA = "vepa" // libvirt's default direct mode, written back at define
	LinkStateUp    = "up"
	LinkStateDown  = "down"
	xmlYes, xmlNo  = "yes", "no"
	maxVLANID      = 4095
	virtioNICModel = "virtio"
)

// Direct is a macvtap NIC on a host link.
type Direct struct {
	Dev  string
	Mode string // bridge, vepa, private, passthrough; empty: vepa
}

// NICOptions are one NIC's optional settings; the zero value writes none of them.
type NICOptions struct {
	PortGroup   string
	VLAN        *VLAN
	VirtualPort *VirtualPort
	MTU         uint
	Queues      uint   // virtio only
	LinkState   string // empty: absent, which is up
	Bandwidth   *Bandwidth
	BootOrder   uint
	ROM         *ROM
	Filter      *Filter
	// TrustGuestRXFilters is nil when absent (the same as false).
	TrustGuestRXFilters *bool
}

// VLAN tags; NativeTag (with NativeMode tagged/untagged) is the trunk's native VLAN.
type VLAN struct {
	Tags       []uint
	Trunk      bool
	NativeTag  uint
	NativeMode string
}

// VirtualPort is the port profile. InterfaceID is openvswitch's interfaceid or
// 802.1Qbg's instanceid: libvirt generates it when left empty.
type VirtualPort struct {
	Type        string
	InterfaceID string
	ProfileID   string
}

// Bandwidth limits per direction, in KiB/s (average, peak) and KiB (burst).
type Bandwidth struct {
	Inbound, Outbound *BandwidthLimit
}

// BandwidthLimit is one direction's limits; 0 is unset.
type BandwidthLimit struct {
	Average, Peak, Burst uint
}

// ROM is the NIC's option ROM: Bar on/off, File a ROM image on the host.
type ROM struct {
	Bar  string
	File string
}

// Filter is an nwfilter reference with its parameters.
type Filter struct {
	Name       string
	Parameters map[string]string
}

// validateNIC checks one NIC's options; the name says which NIC.
func validateNIC(name string, n Interface) error {
	o := n.NICOptions
	switch {
	case o.PortGroup != "" && n.Network == "":
		return fmt.Errorf("%s: port_group needs a network source", name)
	case o.Queues > 0 && modelOf(n) != virtioNICModel:
		return fmt.Errorf("%s: queues needs model virtio, not %s", name, modelOf(n))
	case o.LinkState != "" && o.LinkState != LinkStateUp && o.LinkState != LinkStateDown:
		return fmt.Errorf("%s: link_state must be up or down", name)
	}
	if v := o.VLAN; v != nil {
		if len(v.Tags) == 0 && v.NativeTag == 0 {
			return fmt.Errorf("%s: vlan needs tags or native_tag", name)
		}
		for _, t := range append(slices.Clone(v.Tags), v.NativeTag) {
			if t > maxVLANID {
				return fmt.Errorf("%s: vlan tag %d is beyond %d", name, t, maxVLANID)
			}
		}
		if (v.NativeTag == 0) != (v.NativeMode == "") {
			return fmt.Errorf("%s: vlan native_tag and native_mode go together", name)
		}
	}
	if p := o.VirtualPort; p != nil {
		switch {
		case p.Type == VirtualPortQbh && (p.ProfileID == "" || p.InterfaceID != ""):
			return fmt.Errorf("%s: virtualport 802.1Qbh needs profile_id and has no interface_id", name)
		case p.Type == VirtualPortQbg && p.ProfileID != "":
			return fmt.Errorf("%s: virtualport 802.1Qbg has no profile_id", name)
		}
	}
	if b := o.Bandwidth; b != nil {
		for dir, l := range map[string]*BandwidthLimit{"inbound": b.Inbound, "outbound": b.Outbound} {
			if l != nil && l.Average == 0 {
				return fmt.Errorf("%s: bandwidth %s needs average_kib", name, dir)
			}
		}
	}
	return nil
}

// buildNICOptions writes o into x, a fresh interface or the NIC's current one, clearing
// what o leaves unset (only the driver's other attributes survive).
func buildNICOptions(x *libvirtxml.DomainInterface, o NICOptions) {
	if o.PortGroup != "" && x.Source != nil && x.Source.Network != nil {
		x.Source.Network.PortGroup = o.PortGroup
	}
	x.VLan = buildVLAN(o.VLAN)
	x.VirtualPort = buildVirtualPort(o.VirtualPort, x.VirtualPort)
	x.MTU, x.Link, x.Boot, x.ROM, x.FilterRef, x.Bandwidth = nil, nil, nil, nil, nil, nil
	if o.MTU > 0 {
		x.MTU = &libvirtxml.DomainInterfaceMTU{Size: o.MTU}
	}
	if o.LinkState != "" {
		x.Link = &libvirtxml.DomainInterfaceLink{State: o.LinkState}
	}
	if o.BootOrder > 0 {
		x.Boot = &libvirtxml.DomainDeviceBoot{Order: o.BootOrder}
	}
	if r := o.ROM; r != nil {
		x.ROM = &libvirtxml.DomainROM{Bar: r.Bar}
		if r.File != "" {
			x.ROM.File = &r.File
		}
	}
	if f := o.Filter; f != nil {
		x.FilterRef = &libvirtxml.DomainInterfaceFilterRef{Filter: f.Name}
		for _, k := range slices.Sorted(maps.Keys(f.Parameters)) {
			x.FilterRef.Parameters = append(x.FilterRef.Parameters, libvirtxml.DomainInterfaceFilterParam{Name: k, Value: f.Parameters[k]})
		}
	}
	if b := o.Bandwidth; b != nil {
		x.Bandwidth = &libvirtxml.DomainInterfaceBandwidth{Inbound: buildLimit(b.Inbound), Outbound: buildLimit(b.Outbound)}
	}
	x.TrustGuestRXFilters = ""
	if t := o.TrustGuestRXFilters; t != nil {
		x.TrustGuestRXFilters = yesNo(*t)
	}
	if o.Queues > 0 && x.Driver == nil {
		x.Driver = &libvirtxml.DomainInterfaceDriver{}
	}
	if x.Driver != nil {
		x.Driver.Queues = o.Queues
		if *x.Driver == (libvirtxml.DomainInterfaceDriver{}) {
			x.Driver = nil
		}
	}
}

func buildVLAN(v *VLAN) *libvirtxml.DomainInterfaceVLan {
	if v == nil {
		return nil
	}
	out := &libvirtxml.DomainInterfaceVLan{}
	if v.Trunk {
		out.Trunk = xmlYes
	}
	for _, t := range v.Tags {
		out.Tags = append(out.Tags, libvirtxml.DomainInterfaceVLanTag{ID: t})
	}
	if v.NativeMode != "" {
		out.Tags = append(out.Tags, libvirtxml.DomainInterfaceVLanTag{ID: v.NativeTag, NativeMode: v.NativeMode})
	}
	return out
}

// buildVirtualPort keeps a generated id and 802.1Qbg's manager/type ids from the current
// port of the same type.
func buildVirtualPort(p *VirtualPort, cur *libvirtxml.DomainInterfaceVirtualPort) *libvirtxml.DomainInterfaceVirtualPort {
	if p == nil {
		return nil
	}
	old := parseVirtualPort(cur)
	id := p.InterfaceID
	if id == "" && old != nil && old.Type == p.Type {
		id = old.InterfaceID
	}
	params := &libvirtxml.DomainInterfaceVirtualPortParams{}
	switch p.Type {
	case VirtualPortOVS:
		params.OpenVSwitch = &libvirtxml.DomainInterfaceVirtualPortParamsOpenVSwitch{InterfaceID: id, ProfileID: p.ProfileID}
	case VirtualPortQbh:
		params.VNTag8011QBH = &libvirtxml.DomainInterfaceVirtualPortParamsVNTag8021QBH{ProfileID: p.ProfileID}
	case VirtualPortQbg:
		params.VEPA8021QBG = &libvirtxml.DomainInterfaceVirtualPortParamsVEPA8021QBG{InstanceID: id}
		if old != nil && old.Type == p.Type && cur.Params.VEPA8021QBG != nil {
			q := *cur.Params.VEPA8021QBG
			q.InstanceID = id
			params.VEPA8021QBG = &q
		}
	}
	return &libvirtxml.DomainInterfaceVirtualPort{Params: params}
}

func buildLimit(l *BandwidthLimit) *libvirtxml.DomainInterfaceBandwidthParams {
	if l == nil {
		return nil
	}
	out := &libvirtxml.DomainInterfaceBandwidthParams{}
	for _, f := range []struct {
		v   uint
		dst **int
	}{{l.Average, &out.Average}, {l.Peak, &out.Peak}, {l.Burst, &out.Burst}} {
		if f.v > 0 {
			v := int(f.v)
			*f.dst = &v
		}
	}
	return out
}

// parseNICOptions reads x's options (x is from the inactive XML).
func parseNICOptions(x *libvirtxml.DomainInterface) NICOptions {
	o := NICOptions{VirtualPort: parseVirtualPort(x.VirtualPort)}
	if x.Source != nil && x.Source.Network != nil {
		o.PortGroup = x.Source.Network.PortGroup
	}
	if v := x.VLan; v != nil {
		o.VLAN = &VLAN{Trunk: v.Trunk == xmlYes}
		for _, t := range v.Tags {
			if t.NativeMode != "" {
				o.VLAN.NativeTag, o.VLAN.NativeMode = t.ID, t.NativeMode
			} else {
				o.VLAN.Tags = append(o.VLAN.Tags, t.ID)
			}
		}
	}
	if x.MTU != nil {
		o.MTU = x.MTU.Size
	}
	if x.Driver != nil {
		o.Queues = x.Driver.Queues
	}
	if x.Link != nil {
		o.LinkState = x.Link.State
	}
	if x.Boot != nil {
		o.BootOrder = x.Boot.Order
	}
	if x.ROM != nil {
		o.ROM = &ROM{Bar: x.ROM.Bar}
		if x.ROM.File != nil {
			o.ROM.File = *x.ROM.File
		}
	}
	if f := x.FilterRef; f != nil {
		o.Filter = &Filter{Name: f.Filter}
		for _, p := range f.Parameters {
			if o.Filter.Parameters == nil {
				o.Filter.Parameters = map[string]string{}
			}
			o.Filter.Parameters[p.Name] = p.Value
		}
	}
	if b := x.Bandwidth; b != nil && (b.Inbound != nil || b.Outbound != nil) {
		o.Bandwidth = &Bandwidth{Inbound: parseLimit(b.Inbound), Outbound: parseLimit(b.Outbound)}
	}
	if t := x.TrustGuestRXFilters; t != "" {
		v := t == xmlYes
		o.TrustGuestRXFilters = &v
	}
	return o
}

// parseVirtualPort reads a typed port; an untyped one (inherited from a network's) is
// not managed.
func parseVirtualPort(v *libvirtxml.DomainInterfaceVirtualPort) *VirtualPort {
	if v == nil || v.Params == nil {
		return nil
	}
	switch p := v.Params; {
	case p.OpenVSwitch != nil:
		return &VirtualPort{Type: VirtualPortOVS, InterfaceID: p.OpenVSwitch.InterfaceID, ProfileID: p.OpenVSwitch.ProfileID}
	case p.VNTag8011QBH != nil:
		return &VirtualPort{Type: VirtualPortQbh, ProfileID: p.VNTag8011QBH.ProfileID}
	case p.VEPA8021QBG != nil:
		return &VirtualPort{Type: VirtualPortQbg, InterfaceID: p.VEPA8021QBG.InstanceID}
	}
	return nil
}

func parseLimit(p *libvirtxml.DomainInterfaceBandwidthParams) *BandwidthLimit {
	if p == nil {
		return nil
	}
	l := &BandwidthLimit{}
	for _, f := range []struct {
		src *int
		dst *uint
	}{{p.Average, &l.Average}, {p.Peak, &l.Peak}, {p.Burst, &l.Burst}} {
		if f.src != nil && *f.src > 0 {
			*f.dst = uint(*f.src)
		}
	}
	return l
}

// sameNICOptions compares two NICs' options, with what libvirt fills in (a generated
// interface id, the implied trunk, link up, trust no) matching what was left unset.
func sameNICOptions(a, b NICOptions) bool {
	return a.PortGroup == b.PortGroup && a.MTU == b.MTU && a.Queues == b.Queues && a.BootOrder == b.BootOrder &&
		linkOf(a) == linkOf(b) && boolOf(a.TrustGuestRXFilters) == boolOf(b.TrustGuestRXFilters) &&
		sameVLAN(a.VLAN, b.VLAN) && sameVirtualPort(a.VirtualPort, b.VirtualPort) &&
		equalPtr(a.Bandwidth, b.Bandwidth, SameBandwidth) && equalPtr(a.ROM, b.ROM, func(x, y ROM) bool { return x == y }) &&
		equalPtr(a.Filter, b.Filter, func(x, y Filter) bool { return x.Name == y.Name && maps.Equal(x.Parameters, y.Parameters) })
}

// NICLiveChange is for the live-operation hook: link and bandwidth say whether they
// differ between old and next (libvirt changes them on a running NIC through
// UpdateDeviceFlags and SetInterfaceParameters); ok is false when anything else differs
// too, which needs a restart.
func NICLiveChange(old, next Interface) (link, bandwidth, ok bool) {
	rest := next
	rest.LinkState, rest.Bandwidth = old.LinkState, old.Bandwidth
	ok = sameInterfaces(Spec{Interfaces: []Interface{old}}, Spec{Interfaces: []Interface{rest}})
	return linkOf(old.NICOptions) != linkOf(next.NICOptions), !equalPtr(old.Bandwidth, next.Bandwidth, SameBandwidth), ok
}

// SameBandwidth compares two NICs' limits (unset directions and values are zero).
func SameBandwidth(a, b Bandwidth) bool {
	return limitOf(a.Inbound) == limitOf(b.Inbound) && limitOf(a.Outbound) == limitOf(b.Outbound)
}

func limitOf(l *BandwidthLimit) BandwidthLimit {
	if l == nil {
		return BandwidthLimit{}
	}
	return *l
}

func linkOf(o NICOptions) string {
	if o.LinkState == "" {
		return LinkStateUp
	}
	return o.LinkState
}

// TrunkOf is whether a VLAN is a trunk: asked for, or implied by more than one tag
// (libvirt then writes trunk='yes').
func TrunkOf(v VLAN) bool {
	n := len(v.Tags)
	if v.NativeMode != "" {
		n++
	}
	return v.Trunk || n > 1
}

func sameVLAN(a, b *VLAN) bool {
	return equalPtr(a, b, func(x, y VLAN) bool {
		return slices.Equal(x.Tags, y.Tags) && TrunkOf(x) == TrunkOf(y) && x.NativeTag == y.NativeTag && x.NativeMode == y.NativeMode
	})
}

func sameVirtualPort(a, b *VirtualPort) bool {
	return equalPtr(a, b, func(x, y VirtualPort) bool {
		return x.Type == y.Type && x.ProfileID == y.ProfileID &&
			(x.InterfaceID == "" || y.InterfaceID == "" || strings.EqualFold(x.InterfaceID, y.InterfaceID))
	})
}

// equalPtr: both nil, or both set and eq.
func equalPtr[T any](a, b *T, eq func(x, y T) bool) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return eq(*a, *b)
}

func boolOf(b *bool) bool { return b != nil && *b }

func yesNo(b bool) string {
	if b {
		return xmlYes
	}
	return xmlNo
}

// directModeOf is the macvtap mode a direct NIC gets.
func directModeOf(d *Direct) string {
	if d.Mode == "" {
		return DirectModeVEPA
	}
	return d.Mode
}
