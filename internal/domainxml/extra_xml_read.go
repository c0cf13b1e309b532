package domainxml

import (
	"reflect"
	"slices"
	"strings"

	"libvirt.org/go/libvirtxml"
)

// Reading extra_xml back (extra_xml.go): the unmodelled top-level elements of a
// definition, printed as libvirt prints them, and what an import writes of them.

// libvirtDefaults are the top-level elements libvirt gives a domain by itself when its
// definition has none, so that a domain the provider defined without them reads back
// with them. An import leaves them out of extra_xml (a plain domain imports with none):
// the domain keeps them on every update, since an element no fragment names stays as the
// domain has it, and a domain created from the imported configuration gets them again.
// Only an element exactly like the entry is left out: <clock offset='utc'> with timers
// is the user's.
var libvirtDefaults = []struct{ xml, why string }{
	// The QEMU driver writes <clock offset='utc'/> into every definition that has no
	// <clock> (seen with `virsh dumpxml --inactive` of a domain this provider defined:
	// no family writes a clock).
	{`<clock offset='utc'/>`, "libvirt's default clock"},
	// Once the domain runs, libvirt puts it into the /machine cgroup partition and prints
	// that in the live XML; a definition saved from a running domain's `virsh dumpxml`
	// carries it, and it is what libvirt chooses without it.
	{`<resource><partition>/machine</partition></resource>`, "libvirt's default cgroup partition"},
}

// unmodelledElements are the top-level elements of d no family builds, in libvirt's
// order (of <cputune>, all but the pins; of a repeatable element, one per item), each
// printed as libvirt prints it.
func unmodelledElements(d *libvirtxml.Domain) []string {
	var out []string
	dv := reflect.ValueOf(d).Elem()
	t := dv.Type()
	for i := range t.NumField() {
		name := fieldElement(t.Field(i))
		if j, ok := domainElements[name]; !ok || j != i || (ownedElements[name] != "" && !untypedElement(d, name) && name != "metadata" && name != "os") || dv.Field(i).IsZero() {
			continue
		}
		if name == "metadata" {
			if f := foreignMetadata(d); f != "" {
				out = append(out, f)
			}
			continue
		}
		src := d
		if name == "os" {
			x := osExtra(d.OS)
			if x == nil {
				continue
			}
			src = &libvirtxml.Domain{OS: x}
		}
		if name == "cputune" {
			tune := *d.CPUTune
			tune.VCPUPin, tune.EmulatorPin = nil, nil
			if emptyCPUTune(&tune) {
				continue
			}
			src = &libvirtxml.Domain{CPUTune: &tune}
		}
		nodes, err := elementNodes(src, name)
		if err != nil {
			continue
		}
		for _, n := range nodes {
			out = append(out, n.libvirtText())
		}
	}
	return out
}

// ExtraXMLPresent says whether fragment is in the definition whose unmodelled elements
// are have (Spec.ExtraXML as read): some element has everything the fragment says.
func ExtraXMLPresent(have []string, fragment string) bool {
	want, err := ParseExtraFragment(fragment)
	if err != nil {
		return false
	}
	stripDeclarations(want)
	for _, h := range have {
		if n, err := comparableNode(h); err == nil && n.has(want) {
			return true
		}
	}
	return false
}

// ImportExtraXML is what an import writes into extra_xml from the unmodelled elements
// read (Spec.ExtraXML) and the fragments the record lists (Spec.ExtraXMLWas, of a domain
// this provider made): first the recorded fragments the definition has, as the
// configuration wrote them and in its order, then every other element but libvirt's own
// defaults, as libvirt prints it.
func ImportExtraXML(have, recorded []string) []string {
	var out []string
	var covered []*xmlNode
	for _, f := range recorded {
		if n, err := ParseExtraFragment(f); err == nil && ExtraXMLPresent(have, f) {
			stripDeclarations(n)
			out, covered = append(out, f), append(covered, n)
		}
	}
	for _, h := range have {
		n, err := comparableNode(h)
		if err != nil || isLibvirtDefault(h) || slices.ContainsFunc(covered, func(c *xmlNode) bool { return n.has(c) }) {
			continue
		}
		out = append(out, h)
	}
	return out
}

func isLibvirtDefault(text string) bool {
	n, err := parseNode(text)
	if err != nil {
		return false
	}
	for _, d := range libvirtDefaults {
		if def, err := parseNode(d.xml); err == nil && n.has(def) && def.has(n) {
			return true
		}
	}
	return false
}

// libvirtText is n written as libvirt writes domain XML, on one line: attributes in
// single quotes, an empty element closed in its start tag.
func (n xmlNode) libvirtText() string {
	var b strings.Builder
	n.writeLibvirt(&b, "")
	return b.String()
}

// writeLibvirt writes n; an element of a namespace is written with its prefix (qemu for
// libvirt's QEMU namespace, else a default-namespace declaration), declared on the
// outermost element of the namespace (ns: the namespace in scope).
func (n xmlNode) writeLibvirt(b *strings.Builder, ns string) {
	name := n.XMLName.Local
	decl := ""
	if sp := n.XMLName.Space; sp != "" {
		if sp == qemuNS {
			name = "qemu:" + name
			if ns != sp {
				decl = " xmlns:qemu='" + attrEscaper.Replace(sp) + "'"
			}
		} else if ns != sp {
			decl = " xmlns='" + attrEscaper.Replace(sp) + "'"
		}
	}
	b.WriteString("<" + name + decl)
	for _, a := range n.Attrs {
		if a.Name.Space == "xmlns" || (a.Name.Space == "" && a.Name.Local == "xmlns") {
			continue
		}
		b.WriteString(" " + a.Name.Local + "='" + attrEscaper.Replace(a.Value) + "'")
	}
	text := strings.TrimSpace(n.Text)
	if len(n.Nodes) == 0 && text == "" {
		b.WriteString("/>")
		return
	}
	b.WriteString(">")
	if len(n.Nodes) == 0 {
		b.WriteString(textEscaper.Replace(text))
	}
	for _, c := range n.Nodes {
		c.writeLibvirt(b, n.XMLName.Space)
	}
	b.WriteString("</" + name + ">")
}

var (
	attrEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "'", "&apos;", `"`, "&quot;")
	textEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
)
