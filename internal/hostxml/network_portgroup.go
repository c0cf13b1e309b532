package hostxml

import (
	"encoding/xml"
	"fmt"

	"libvirt.org/go/libvirtxml"
)

// Port groups and the settings a network (or one of its port groups) gives the ports of
// its guests: VLAN tags, an Open vSwitch (or 802.1Qbh/Qbg) port profile and traffic
// shaping.

// Virtual port types a network takes.
const (
	VirtualPortOVS = "openvswitch"
	VirtualPortQbh = "802.1Qbh"
	VirtualPortQbg = "802.1Qbg"
)

// VirtualPortTypes lists them, for validators.
var VirtualPortTypes = []string{VirtualPortOVS, VirtualPortQbh, VirtualPortQbg}

const maxVLANID = 4095

// PortGroup is a named set of port settings guests choose with their interface's
// port_group; Default applies to guests that name none.
type PortGroup struct {
	Name        string
	Default     bool
	VLAN        *VLAN
	Bandwidth   *Bandwidth
	VirtualPort *VirtualPort
}

// VLAN tags; NativeTag (with NativeMode tagged/untagged) is the trunk's native VLAN.
type VLAN struct {
	Tags       []uint
	Trunk      bool
	NativeTag  uint
	NativeMode string
}

// VirtualPort is the port profile of the switch (Open vSwitch: ProfileID optional).
type VirtualPort struct {
	Type      string
	ProfileID string
}

// Bandwidth limits per direction.
type Bandwidth struct {
	Inbound, Outbound *BandwidthLimit
}

// BandwidthLimit is one direction's limits in KiB/s (average, peak) and KiB (burst); 0
// is unset. (libvirt takes floor only on a domain's interface, never in a network.)
type BandwidthLimit struct {
	Average, Peak, Burst uint
}

// NetworkXML is a network definition with what libvirtxml's NetworkPortGroup cannot hold
// (a port group's <bandwidth>): its PortGroups stand in for the embedded Network's.
type NetworkXML struct {
	*libvirtxml.Network
	PortGroups []PortGroupXML `xml:"portgroup"`
}

// PortGroupXML is a <portgroup> with its bandwidth.
type PortGroupXML struct {
	libvirtxml.NetworkPortGroup
	Bandwidth *libvirtxml.NetworkBandwidth `xml:"bandwidth"`
}

// Marshal is the definition's XML.
func (d *NetworkXML) Marshal() (string, error) {
	b, err := xml.MarshalIndent(d, "", "  ")
	return string(b), err
}

// ParseNetworkXML reads a definition, port group bandwidths included. The embedded
// Network's PortGroups are filled too (without bandwidth), for code that reads those.
func ParseNetworkXML(doc string) (*NetworkXML, error) {
	d := &NetworkXML{Network: &libvirtxml.Network{}}
	if err := xml.Unmarshal([]byte(doc), d); err != nil {
		return nil, err
	}
	for _, g := range d.PortGroups {
		d.Network.PortGroups = append(d.Network.PortGroups, g.NetworkPortGroup)
	}
	return d, nil
}

func (n *Network) validatePortGroups(add func(attr, f string, a ...any)) {
	seen, def := map[string]int{}, -1
	for i, g := range n.PortGroups {
		if g.Name == "" || !objectNameRE.MatchString(g.Name) {
			add("port_groups", "port_groups[%d]: name %q must start with a letter or digit and hold only letters, digits, '_', '.', '+' and '-'", i, g.Name)
		}
		if j, ok := seen[g.Name]; ok {
			add("port_groups", "port_groups[%d] and port_groups[%d] are both named %s: names are unique", j, i, g.Name)
		}
		seen[g.Name] = i
		if g.Default {
			if def >= 0 {
				add("port_groups", "port_groups[%d] and port_groups[%d] are both default: at most one port group is", def, i)
			}
			def = i
		}
		where := fmt.Sprintf("port_groups[%d] (%s)", i, g.Name)
		validateVLAN("port_groups", where, g.VLAN, add)
		validateBandwidth("port_groups", where, g.Bandwidth, add)
		validateVirtualPort("port_groups", where, g.VirtualPort, add)
	}
	validateVLAN("vlan", "vlan", n.VLAN, add)
	validateBandwidth("bandwidth", "bandwidth", n.Bandwidth, add)
	validateVirtualPort("virtualport", "virtualport", n.VirtualPort, add)
	// libvirt 9.0 takes VLAN tags only where something on the host applies them.
	ovs := n.Mode == ModeBridge && n.VirtualPort != nil && n.VirtualPort.Type == VirtualPortOVS
	if !ovs && n.Mode != ModeHostdev && n.Mode != ModePassthrough {
		if n.VLAN != nil {
			add("vlan", "mode = %q cannot tag VLANs: vlan needs mode = \"hostdev\", \"passthrough\", or \"bridge\" with virtualport type openvswitch", n.Mode)
		}
		for i, g := range n.PortGroups {
			if g.VLAN != nil {
				add("port_groups", "port_groups[%d] (%s): mode = %q cannot tag VLANs: vlan needs mode = \"hostdev\", \"passthrough\", or \"bridge\" with virtualport type openvswitch", i, g.Name, n.Mode)
			}
		}
	}
}

func validateVLAN(attr, where string, v *VLAN, add func(attr, f string, a ...any)) {
	if v == nil {
		return
	}
	if len(v.Tags) == 0 && v.NativeTag == 0 {
		add(attr, "%s: give tags (or native_tag with native_mode)", where)
	}
	for _, t := range append(append([]uint(nil), v.Tags...), v.NativeTag) {
		if t > maxVLANID {
			add(attr, "%s: VLAN id %d is beyond %d", where, t, maxVLANID)
		}
	}
	if (v.NativeTag == 0) != (v.NativeMode == "") {
		add(attr, "%s: native_tag and native_mode go together", where)
	}
}

func validateBandwidth(attr, where string, b *Bandwidth, add func(attr, f string, a ...any)) {
	if b == nil {
		return
	}
	if b.Inbound == nil && b.Outbound == nil {
		add(attr, "%s: give inbound, outbound or both", where)
	}
	for dir, l := range map[string]*BandwidthLimit{"inbound": b.Inbound, "outbound": b.Outbound} {
		switch {
		case l == nil:
		case l.Average == 0:
			add(attr, "%s: %s needs average_kib", where, dir)
		case l.Peak != 0 && l.Peak < l.Average:
			add(attr, "%s: %s peak_kib %d is below average_kib %d", where, dir, l.Peak, l.Average)
		}
	}
}

func validateVirtualPort(attr, where string, p *VirtualPort, add func(attr, f string, a ...any)) {
	if p == nil {
		return
	}
	switch p.Type {
	case VirtualPortOVS:
	case VirtualPortQbh:
		if p.ProfileID == "" {
			add(attr, "%s: an 802.1Qbh virtual port needs profile_id", where)
		}
	case VirtualPortQbg:
		if p.ProfileID != "" {
			add(attr, "%s: an 802.1Qbg virtual port has no profile_id", where)
		}
	default:
		add(attr, "%s: type %q is not one of openvswitch, 802.1Qbh, 802.1Qbg", where, p.Type)
	}
}

func vlanXML(v *VLAN) *libvirtxml.NetworkVLAN {
	if v == nil {
		return nil
	}
	x := &libvirtxml.NetworkVLAN{}
	if v.Trunk {
		x.Trunk = "yes"
	}
	for _, t := range v.Tags {
		x.Tags = append(x.Tags, libvirtxml.NetworkVLANTag{ID: t})
	}
	if v.NativeMode != "" {
		x.Tags = append(x.Tags, libvirtxml.NetworkVLANTag{ID: v.NativeTag, NativeMode: v.NativeMode})
	}
	return x
}

func vlanFromXML(x *libvirtxml.NetworkVLAN) *VLAN {
	if x == nil {
		return nil
	}
	v := &VLAN{Trunk: x.Trunk == "yes"}
	for _, t := range x.Tags {
		if t.NativeMode != "" {
			v.NativeTag, v.NativeMode = t.ID, t.NativeMode
			continue
		}
		v.Tags = append(v.Tags, t.ID)
	}
	return v
}

func virtualPortXML(p *VirtualPort) *libvirtxml.NetworkVirtualPort {
	if p == nil {
		return nil
	}
	params := &libvirtxml.NetworkVirtualPortParams{}
	switch p.Type {
	case VirtualPortOVS:
		params.OpenVSwitch = &libvirtxml.NetworkVirtualPortParamsOpenVSwitch{ProfileID: p.ProfileID}
	case VirtualPortQbh:
		params.VNTag8011QBH = &libvirtxml.NetworkVirtualPortParamsVNTag8021QBH{ProfileID: p.ProfileID}
	case VirtualPortQbg:
		params.VEPA8021QBG = &libvirtxml.NetworkVirtualPortParamsVEPA8021QBG{}
	}
	return &libvirtxml.NetworkVirtualPort{Params: params}
}

func virtualPortFromXML(x *libvirtxml.NetworkVirtualPort) *VirtualPort {
	if x == nil || x.Params == nil {
		return nil
	}
	switch p := x.Params; {
	case p.OpenVSwitch != nil:
		return &VirtualPort{Type: VirtualPortOVS, ProfileID: p.OpenVSwitch.ProfileID}
	case p.VNTag8011QBH != nil:
		return &VirtualPort{Type: VirtualPortQbh, ProfileID: p.VNTag8011QBH.ProfileID}
	case p.VEPA8021QBG != nil:
		return &VirtualPort{Type: VirtualPortQbg}
	}
	return nil
}

func bandwidthXML(b *Bandwidth) *libvirtxml.NetworkBandwidth {
	if b == nil {
		return nil
	}
	return &libvirtxml.NetworkBandwidth{Inbound: limitXML(b.Inbound), Outbound: limitXML(b.Outbound)}
}

func limitXML(l *BandwidthLimit) *libvirtxml.NetworkBandwidthParams {
	if l == nil {
		return nil
	}
	p := func(v uint) *uint {
		if v == 0 {
			return nil
		}
		return &v
	}
	return &libvirtxml.NetworkBandwidthParams{Average: p(l.Average), Peak: p(l.Peak), Burst: p(l.Burst)}
}

func bandwidthFromXML(x *libvirtxml.NetworkBandwidth) *Bandwidth {
	if x == nil || (x.Inbound == nil && x.Outbound == nil) {
		return nil
	}
	return &Bandwidth{Inbound: limitFromXML(x.Inbound), Outbound: limitFromXML(x.Outbound)}
}

func limitFromXML(x *libvirtxml.NetworkBandwidthParams) *BandwidthLimit {
	if x == nil {
		return nil
	}
	v := func(p *uint) uint {
		if p == nil {
			return 0
		}
		return *p
	}
	return &BandwidthLimit{Average: v(x.Average), Peak: v(x.Peak), Burst: v(x.Burst)}
}

// PortGroupXML is one port group's element (for the definition and network-update).
func (g PortGroup) XML() PortGroupXML {
	x := PortGroupXML{NetworkPortGroup: libvirtxml.NetworkPortGroup{Name: g.Name, VLAN: vlanXML(g.VLAN), VirtualPort: virtualPortXML(g.VirtualPort)},
		Bandwidth: bandwidthXML(g.Bandwidth)}
	if g.Default {
		x.Default = "yes"
	}
	return x
}

func portGroupFromXML(x PortGroupXML) PortGroup {
	return PortGroup{Name: x.Name, Default: x.Default == "yes", VLAN: vlanFromXML(x.VLAN), VirtualPort: virtualPortFromXML(x.VirtualPort),
		Bandwidth: bandwidthFromXML(x.Bandwidth)}
}

// Definition is ToXML with the port groups' bandwidth: what is defined on the host.
func (n *Network) Definition() (*NetworkXML, error) {
	x, err := n.ToXML()
	if err != nil {
		return nil, err
	}
	d := &NetworkXML{Network: x}
	for _, g := range n.PortGroups {
		d.PortGroups = append(d.PortGroups, g.XML())
	}
	x.PortGroups = nil // the wrapper's stand in
	return d, nil
}

// NetworkFromDefinition is NetworkFromXML with the port groups' bandwidth.
func NetworkFromDefinition(d *NetworkXML) (*Network, error) {
	x := *d.Network
	x.PortGroups = nil
	n, err := NetworkFromXML(&x)
	if err != nil {
		return nil, err
	}
	for _, g := range d.PortGroups {
		n.PortGroups = append(n.PortGroups, portGroupFromXML(g))
	}
	return n, nil
}
