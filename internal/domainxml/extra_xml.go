package domainxml

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"libvirt.org/go/libvirtxml"
)

// extra_xml: raw fragments for the top-level elements of <domain> that no family models
// (<clock> with its timers, <memtune>, <blkiotune>, <seclabel>, <perf>, <keywrap>,
// <resource>, <idmap>, <pm>, <genid>, the parts of <cputune> beyond the pins, ...). Each
// fragment is one such element. The fragments as the user wrote them are kept in the
// record (record.go), like device_xml's: Build replaces the element of each fragment's
// name and takes away the elements the last apply wrote that the list no longer has; an
// element neither the configuration nor the fragments mention stays as the domain has it.
//
// Read back, the family gives every unmodelled top-level element of the definition,
// printed as libvirt prints it (extra_xml_read.go); the provider keeps the fragments the
// definition has (ExtraXMLPresent: libvirt's additions ignored, as device_xml's has) and
// on import writes those that are not libvirt's own defaults (ImportExtraXML). Any change
// restarts a running domain.

// ownedElements are the top-level elements a family builds, with the attribute that
// writes each: a fragment may not write them (the family would overwrite it, or read it
// as its own). <cputune> is shared: cpu.pinning and cpu.emulator_pinning own its
// <vcpupin> and <emulatorpin>, a fragment the rest (extraCPUTune).
var ownedElements = map[string]string{
	"name": "name", "uuid": "uuid", "title": "title", "description": "description",
	"metadata":      "tags (libvirt_domain keeps its record there; a <metadata> fragment holds other applications' elements)",
	"memory":        "memory_mib and max_memory_mib",
	"currentMemory": "memory_mib",
	"vcpu":          "vcpu and max_vcpu", "vcpus": "vcpu and max_vcpu",
	"iothreads": "cpu.iothreads", "iothreadids": "cpu.iothreads",
	"os": "os", "cpu": "cpu", "features": "features", "memoryBacking": "memory_backing",
	"on_poweroff": "events.on_poweroff", "on_reboot": "events.on_reboot", "on_crash": "events.on_crash",
	"sysinfo":               "os.smbios and os.fw_cfg",
	qemuNS + " commandline": "qemu.args and qemu.env",
	"devices":               "device_xml and the device blocks (disk, network_interface, devices, ...)",
}

// domainElements maps each element libvirtxml reads under <domain> (outside the
// hypervisor namespaces, which it reads by XML namespace) to its field of
// libvirtxml.Domain.
var domainElements = func() map[string]int {
	out := map[string]int{}
	t := reflect.TypeFor[libvirtxml.Domain]()
	for i := range t.NumField() {
		name := fieldElement(t.Field(i))
		if name == "" || name == "domain" {
			continue
		}
		out[name] = i
	}
	return out
}()

// fieldElement is the element a field of libvirtxml.Domain reads: its tag's name, or for
// a hypervisor namespace's element (a field without a tag) the "namespace name" of its
// type's XMLName; "" for an attribute or what is no element.
func fieldElement(f reflect.StructField) string {
	name, opts, _ := strings.Cut(f.Tag.Get("xml"), ",")
	if strings.Contains(opts, "attr") || name == "-" {
		return ""
	}
	if name == "" {
		t := f.Type
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return ""
		}
		x, ok := t.FieldByName("XMLName")
		if !ok {
			return ""
		}
		name, _, _ = strings.Cut(x.Tag.Get("xml"), ",")
	}
	return name
}

var extraXMLFamily = family{
	name: "extra_xml",
	validate: func(s *Spec) error {
		for i, err := range CheckExtraXML(s.ExtraXML) {
			if err != nil {
				return fmt.Errorf("extra_xml[%d]: %w", i, err)
			}
		}
		return checkEscapedOwned(s)
	},
	build: buildExtraXML,
	parse: func(d *libvirtxml.Domain, p *Parsed, rec *record) {
		p.Spec.ExtraXML, p.Spec.ExtraXMLWas = unmodelledElements(d), rec.ExtraXML
	},
	same: func(a, b Spec) bool { return slices.EqualFunc(a.ExtraXML, b.ExtraXML, sameFragment) },
}

// sameFragment says whether two fragments say the same (quotes, spacing and attribute
// order aside): a fragment rewritten that way rewrites the definition without a restart.
func sameFragment(a, b string) bool {
	if a == b {
		return true
	}
	na, errA := comparableNode(a)
	nb, errB := comparableNode(b)
	return errA == nil && errB == nil && na.has(nb) && nb.has(na)
}

// ParseExtraFragment checks that text is one top-level domain element libvirt knows and
// no family owns, written so that it survives the way to libvirt and back, and returns it
// as a node.
func ParseExtraFragment(text string) (*xmlNode, error) {
	n, err := parseNode(text)
	if err != nil {
		return nil, fmt.Errorf("not one XML element: %w", err)
	}
	name := elementKey(n)
	if n.XMLName.Space != "" {
		stripDeclarations(n)
		if (n.XMLName.Space == qemuNS || n.XMLName.Space == "qemu") && n.XMLName.Local == "commandline" {
			return nil, fmt.Errorf("<qemu:commandline> is managed by qemu (qemu.args and qemu.env); configure it there, not as raw XML")
		}
		if _, ok := domainElements[name]; !ok {
			return nil, fmt.Errorf("<%s> of namespace %s is not an element libvirt's domain format knows (qemu's are "+
				"<qemu:capabilities>, <qemu:override>, <qemu:deprecation>, in namespace %s)", n.XMLName.Local, n.XMLName.Space, qemuNS)
		}
	}
	if name == "metadata" && n.XMLName.Space == "" {
		if err := checkMetadataFragment(text, n); err != nil {
			return nil, err
		}
		return n, nil
	}
	if name == "os" {
		probe, err := fragmentDomain(n)
		if err != nil {
			return nil, fmt.Errorf("<%s> does not parse as libvirt's domain format: %w", name, err)
		}
		if err := checkOSFragment(probe); err != nil {
			return nil, err
		}
	} else if owner, ok := ownedElements[name]; ok {
		u, escapable := untypedOwned[name]
		if !escapable {
			return nil, fmt.Errorf("<%s> is managed by %s; configure it there, not as raw XML", name, owner)
		}
		probe, err := fragmentDomain(n)
		if err != nil {
			return nil, fmt.Errorf("<%s> does not parse as libvirt's domain format: %w", name, err)
		}
		if !u.untyped(probe) {
			return nil, fmt.Errorf("<%s> is managed by %s; configure it there, not as raw XML (extra_xml takes a <%s> "+
				"only in a form %s cannot say)", name, owner, name, u.what)
		}
	}
	if _, ok := domainElements[name]; !ok {
		return nil, fmt.Errorf("<%s> is not an element of libvirt's domain format (no such child of <domain>)", name)
	}
	if len(n.Attrs) == 0 && len(n.Nodes) == 0 && strings.TrimSpace(n.Text) == "" && name != "genid" { // <genid/>: libvirt makes one
		return nil, fmt.Errorf("an empty <%s> says nothing: libvirt drops it, and the fragment would never read back", name)
	}
	if name == "cputune" {
		for _, c := range n.Nodes {
			switch c.XMLName.Local {
			case "vcpupin":
				return nil, fmt.Errorf("<cputune><vcpupin> is managed by cpu.pinning; write the pins there and the rest of <cputune> here")
			case "emulatorpin":
				return nil, fmt.Errorf("<cputune><emulatorpin> is managed by cpu.emulator_pinning; write it there and the rest of <cputune> here")
			}
		}
	}
	// What libvirt's domain format does not know (an attribute or element it has not, a
	// value in a form it rewrites) does not survive the way to libvirt and back: the
	// definition would never hold the fragment, and every plan would want to write it again.
	probe, err := fragmentDomain(n)
	if err != nil {
		return nil, fmt.Errorf("<%s> does not parse as libvirt's domain format: %w", name, err)
	}
	back, err := elementNodes(probe, name)
	if err != nil || len(back) != 1 || !back[0].has(n) {
		return nil, fmt.Errorf("<%s> says something libvirt's domain format does not know (an unknown attribute or "+
			"element, or a value libvirt would rewrite): it would be dropped on define and the fragment would never "+
			"read back; write the element as libvirt documents it", name)
	}
	return n, nil
}

// CheckExtraXML is the error of each fragment of list (nil for a good one), a second
// fragment of an element <domain> has only one of included.
func CheckExtraXML(list []string) []error {
	errs := make([]error, len(list))
	first := map[string]int{}
	for i, f := range list {
		n, err := ParseExtraFragment(f)
		if err != nil {
			errs[i] = err
			continue
		}
		name := elementKey(n)
		if j, ok := first[name]; ok && !repeatable(name) {
			errs[i] = fmt.Errorf("a second <%s> (extra_xml[%d] is one): <domain> has one; write it as one fragment", name, j)
			continue
		}
		first[name] = i
	}
	return errs
}

// repeatable says whether <domain> may have several elements of this name (<seclabel>,
// one per security model).
func repeatable(name string) bool {
	return reflect.TypeFor[libvirtxml.Domain]().Field(domainElements[name]).Type.Kind() == reflect.Slice
}

func buildExtraXML(d *libvirtxml.Domain, s *Spec, base *libvirtxml.Domain) error {
	var old []string
	if base != nil {
		old = readRecord(base).ExtraXML
	}
	old = append(old, s.ExtraXMLWas...)
	if len(old) == 0 && len(s.ExtraXML) == 0 {
		return nil
	}
	wanted := map[string]bool{}
	nodes := make([]*xmlNode, len(s.ExtraXML))
	for i, f := range s.ExtraXML {
		n, err := ParseExtraFragment(f)
		if err != nil {
			return fmt.Errorf("extra_xml[%d]: %w", i, err)
		}
		nodes[i], wanted[elementKey(n)] = n, true
	}
	var metadata *string
	for i, n := range nodes {
		if n.XMLName.Local == "metadata" {
			metadata = &s.ExtraXML[i]
		}
	}
	var oldMetadata []string
	dv := reflect.ValueOf(d).Elem()
	for _, f := range old { // what the last apply wrote goes; what another tool wrote stays
		n, err := ParseExtraFragment(f)
		if err != nil || n.XMLName.Local == "features" { // the features family writes <features>
			continue
		}
		name := elementKey(n)
		switch {
		case name == "metadata":
			oldMetadata = append(oldMetadata, f)
		case repeatable(name):
			if err := dropItems(dv.Field(domainElements[name]), name, n); err != nil {
				return err
			}
		case !wanted[name] && (untypedOwned[name].untyped == nil || name == "os" || !familyWrites(s, name)):
			clearElement(d, dv, name) // (an owned element its family writes is the family's again)
		}
	}
	if metadata != nil || len(oldMetadata) > 0 {
		if err := buildMetadata(d, metadata, oldMetadata); err != nil {
			return err
		}
	}
	for _, n := range nodes {
		if n.XMLName.Local == "features" || n.XMLName.Local == "metadata" {
			continue // the features family wrote <features> (before secure boot's smm); <metadata> is merged below
		}
		probe, err := fragmentDomain(n)
		if err != nil {
			return err
		}
		name := elementKey(n)
		i := domainElements[name]
		field, from := dv.Field(i), reflect.ValueOf(probe).Elem().Field(i)
		switch {
		case name == "os":
			buildOSExtra(d, probe)
		case name == "cputune":
			t := *probe.CPUTune
			if d.CPUTune != nil { // the pins are the pinning family's (it ran before)
				t.VCPUPin, t.EmulatorPin = d.CPUTune.VCPUPin, d.CPUTune.EmulatorPin
			}
			d.CPUTune = &t
		case repeatable(name):
			if err := dropItems(field, name, n); err != nil { // the same item written elsewhere
				return err
			}
			field.Set(reflect.AppendSlice(field, from))
		default:
			field.Set(from)
		}
	}
	return nil
}

// clearElement takes the element name out of d (of <cputune>, all but the pins).
func clearElement(d *libvirtxml.Domain, dv reflect.Value, name string) {
	if name == "os" {
		clearOSExtra(d)
		return
	}
	if name != "cputune" {
		f := dv.Field(domainElements[name])
		f.Set(reflect.Zero(f.Type()))
		return
	}
	if d.CPUTune == nil {
		return
	}
	d.CPUTune = &libvirtxml.DomainCPUTune{VCPUPin: d.CPUTune.VCPUPin, EmulatorPin: d.CPUTune.EmulatorPin}
	if emptyCPUTune(d.CPUTune) {
		d.CPUTune = nil
	}
}

// dropItems removes from the slice field the items that have everything want says.
func dropItems(field reflect.Value, name string, want *xmlNode) error {
	kept := reflect.MakeSlice(field.Type(), 0, field.Len())
	for j := range field.Len() {
		one := reflect.MakeSlice(field.Type(), 1, 1)
		one.Index(0).Set(field.Index(j))
		var d libvirtxml.Domain
		reflect.ValueOf(&d).Elem().Field(domainElements[name]).Set(one)
		got, err := elementNodes(&d, name)
		if err != nil {
			return fmt.Errorf("extra_xml: <%s>: %w", name, err)
		}
		if len(got) == 1 && got[0].has(want) {
			continue
		}
		kept = reflect.Append(kept, field.Index(j))
	}
	if kept.Len() == 0 {
		kept = reflect.Zero(field.Type())
	}
	field.Set(kept)
	return nil
}

// fragmentDomain reads n as the only child of a <domain>, through libvirtxml's reader.
func fragmentDomain(n *xmlNode) (*libvirtxml.Domain, error) {
	var b strings.Builder
	b.WriteString("<domain>")
	if err := writeNode(&b, *n); err != nil {
		return nil, err
	}
	b.WriteString("</domain>")
	var d libvirtxml.Domain
	if err := d.Unmarshal(b.String()); err != nil {
		return nil, err
	}
	return &d, nil
}

// elementNodes is the element name of d as libvirtxml's writer writes it (none, one, or
// one per item of a repeatable element).
func elementNodes(d *libvirtxml.Domain, name string) ([]xmlNode, error) {
	i, ok := domainElements[name]
	if !ok {
		return nil, fmt.Errorf("<%s> is not a domain element", name)
	}
	var only libvirtxml.Domain
	reflect.ValueOf(&only).Elem().Field(i).Set(reflect.ValueOf(d).Elem().Field(i))
	text, err := only.Marshal()
	if err != nil {
		return nil, err
	}
	dom, err := parseNode(text)
	if err != nil {
		return nil, err
	}
	var out []xmlNode
	for _, c := range dom.Nodes {
		if elementKey(&c) == name {
			out = append(out, c)
		}
	}
	return out, nil
}

// qemuNS is the namespace of libvirt's QEMU-specific elements (<qemu:commandline>, ...).
const qemuNS = "http://libvirt.org/schemas/domain/qemu/1.0"

// elementKey is how domainElements names n: its name, with its namespace before it for
// an element of a hypervisor namespace (as libvirtxml's tags write it).
func elementKey(n *xmlNode) string {
	if n.XMLName.Space == "" {
		return n.XMLName.Local
	}
	return n.XMLName.Space + " " + n.XMLName.Local
}
