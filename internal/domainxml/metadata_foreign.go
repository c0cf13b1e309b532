package domainxml

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"libvirt.org/go/libvirtxml"
)

// Other applications' metadata (issue #25): virt-install's libosinfo entry, a backup
// tool's or an inventory's element. An update keeps them as the domain has them (only the
// provider's own elements are rewritten: SetMetadata), and extra_xml carries them so that
// a domain recreated from an imported configuration has them too: one <metadata> fragment
// whose children are the foreign elements, each in its own XML namespace, declared on the
// child or on <metadata> itself, e.g.
//
//	<metadata xmlns:libosinfo="http://libosinfo.org/xmlns/libvirt/domain/1.0">
//	  <libosinfo:libosinfo><libosinfo:os id="http://debian.org/debian/12"/></libosinfo:libosinfo>
//	</metadata>
//
// Build puts each child in place of the domain's element of the same namespace and name
// and keeps the provider's records beside them; a child a previous apply wrote that the
// fragment no longer has is taken away. Read back, the fragment is the domain's
// <metadata> without the provider's records. The provider's own namespaces are refused
// in it (tags and the record are written from the configuration).

// ownMetadataNS are the namespaces of the provider's own records.
var ownMetadataNS = []string{MetadataNS, CloneMetadataNS, MachineMetadataNS}

// metadataElement is one top-level element of metadata content: its namespace and name,
// and its text, standalone (with the declarations it needs).
type metadataElement struct {
	name xml.Name
	text string
}

// metadataElements are the top-level elements of metadata content inner, whose
// namespaces are declared on each element (or given in decls).
func metadataElements(inner string, decls map[string]string) ([]metadataElement, error) {
	if len(decls) > 0 {
		inner = declareNamespaces(inner, decls)
	}
	dec := tokenDecoder(inner)
	var out []metadataElement
	depth := 0
	var start int64
	var name xml.Name
	for {
		before := dec.InputOffset()
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("parse metadata: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				start, name = before, t.Name
			}
			depth++
		case xml.EndElement:
			depth--
			if depth == 0 {
				out = append(out, metadataElement{name: name, text: inner[start:dec.InputOffset()]})
			}
		case xml.CharData:
			if depth == 0 && strings.TrimSpace(string(t)) != "" {
				return nil, fmt.Errorf("<metadata> holds text outside its elements: put it inside an element of your own namespace")
			}
		}
	}
}

// metadataFragmentElements are the children of a <metadata> fragment, each standalone.
func metadataFragmentElements(fragment string) ([]metadataElement, error) {
	decls := metadataNamespaces("<domain>" + fragment + "</domain>")
	dec := tokenDecoder(fragment)
	var open, end int64 = -1, -1
	depth := 0
	for {
		before := dec.InputOffset()
		tok, err := dec.RawToken()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				open = dec.InputOffset()
			}
			depth++
		case xml.EndElement:
			depth--
			if depth == 0 {
				end = before
			}
		}
	}
	if open < 0 {
		return nil, fmt.Errorf("not one <metadata> element")
	}
	if end < open { // <metadata/>
		return nil, nil
	}
	return metadataElements(fragment[open:end], decls)
}

// checkMetadataFragment: the children of a <metadata> fragment are elements of other
// applications' namespaces, one per namespace and name.
func checkMetadataFragment(fragment string, n *xmlNode) error {
	for _, a := range n.Attrs {
		if a.Name.Space != "xmlns" && !(a.Name.Space == "" && a.Name.Local == "xmlns") {
			return fmt.Errorf("<metadata> takes no attribute but namespace declarations (%s)", a.Name.Local)
		}
	}
	els, err := metadataFragmentElements(fragment)
	if err != nil {
		return err
	}
	if len(els) == 0 {
		return fmt.Errorf("an empty <metadata> says nothing: libvirt drops it, and the fragment would never read back")
	}
	seen := map[xml.Name]bool{}
	for _, e := range els {
		switch {
		case e.name.Space == "":
			return fmt.Errorf("<metadata><%s> has no XML namespace: libvirt keeps only elements of an application's own namespace "+
				"there (declare one, e.g. <app:%s xmlns:app=\"https://example.org/app/1\">)", e.name.Local, e.name.Local)
		case isOwnMetadataNS(e.name.Space):
			return fmt.Errorf("<metadata> holds the provider's own record (%s): tags and the record are written from the "+
				"configuration; leave it out", e.name.Space)
		case seen[e.name]:
			return fmt.Errorf("<metadata> holds two <%s> of namespace %s: give each once", e.name.Local, e.name.Space)
		}
		seen[e.name] = true
	}
	return nil
}

func isOwnMetadataNS(ns string) bool {
	for _, o := range ownMetadataNS {
		if ns == o {
			return true
		}
	}
	return false
}

// foreignMetadata is d's <metadata> without the provider's records, as an extra_xml
// fragment; "" when it holds nothing else.
func foreignMetadata(d *libvirtxml.Domain) string {
	if d.Metadata == nil {
		return ""
	}
	els, err := metadataElements(d.Metadata.XML, nil)
	if err != nil {
		return ""
	}
	var b strings.Builder
	for _, e := range els {
		if !isOwnMetadataNS(e.name.Space) {
			b.WriteString(compactXML(e.text))
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return "<metadata>" + b.String() + "</metadata>"
}

// compactXML is text without the blank text between its elements (libvirt's
// indentation), prefixes and everything else as written; text it cannot read stays as it
// is.
func compactXML(text string) string {
	dec := tokenDecoder(text)
	var b strings.Builder
	open := false // a start tag is written but for its ">": an end next closes it as "/>"
	closeOpen := func() {
		if open {
			b.WriteString(">")
			open = false
		}
	}
	for {
		tok, err := dec.RawToken()
		if errors.Is(err, io.EOF) {
			return b.String()
		}
		if err != nil {
			return text
		}
		switch t := tok.(type) {
		case xml.StartElement:
			closeOpen()
			b.WriteString("<" + qualified(t.Name))
			for _, a := range t.Attr {
				b.WriteString(" " + qualified(a.Name) + `="`)
				_ = xml.EscapeText(&b, []byte(a.Value))
				b.WriteString(`"`)
			}
			open = true
		case xml.EndElement:
			if open {
				b.WriteString("/>")
				open = false
			} else {
				b.WriteString("</" + qualified(t.Name) + ">")
			}
		case xml.CharData:
			if strings.TrimSpace(string(t)) != "" {
				closeOpen()
				_ = xml.EscapeText(&b, t)
			}
		case xml.Comment, xml.ProcInst, xml.Directive:
			return text
		}
	}
}

// buildMetadata writes the children of fragment (nil: none) into d's <metadata> in place
// of the elements of the same namespace and name, after taking away those of the
// fragments in old (what the previous apply wrote) that fragment no longer has.
func buildMetadata(d *libvirtxml.Domain, fragment *string, old []string) error {
	var want []metadataElement
	if fragment != nil {
		var err error
		if want, err = metadataFragmentElements(*fragment); err != nil {
			return fmt.Errorf("extra_xml: <metadata>: %w", err)
		}
	}
	inner := ""
	if d.Metadata != nil {
		inner = d.Metadata.XML
	}
	drop := func(name xml.Name) error {
		var err error
		inner, err = withoutElement(inner, name.Space, name.Local)
		return err
	}
	for _, f := range old {
		els, err := metadataFragmentElements(f)
		if err != nil {
			continue
		}
		for _, e := range els {
			if err := drop(e.name); err != nil {
				return err
			}
		}
	}
	var added strings.Builder
	for _, e := range want {
		if err := drop(e.name); err != nil {
			return err
		}
		added.WriteString(e.text)
	}
	inner = added.String() + inner // other applications' elements first, the provider's record after
	if strings.TrimSpace(inner) == "" {
		d.Metadata = nil
	} else {
		d.Metadata = &libvirtxml.DomainMetadata{XML: inner}
	}
	return nil
}

// comparableNode is text as a node without namespace declarations: where a fragment
// declares its namespaces (on <metadata> or on each child) says nothing.
func comparableNode(text string) (*xmlNode, error) {
	n, err := parseNode(text)
	if err != nil {
		return nil, err
	}
	stripDeclarations(n)
	return n, nil
}

func stripDeclarations(n *xmlNode) {
	kept := n.Attrs[:0]
	for _, a := range n.Attrs {
		if a.Name.Space == "xmlns" || (a.Name.Space == "" && a.Name.Local == "xmlns") {
			continue
		}
		kept = append(kept, a)
	}
	n.Attrs = kept
	for i := range n.Nodes {
		stripDeclarations(&n.Nodes[i])
	}
}
