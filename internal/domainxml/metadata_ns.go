package domainxml

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"libvirt.org/go/libvirtxml"
)

// UnmarshalDomain reads a domain definition as libvirt printed it, keeping what
// libvirtxml alone would lose: libvirt prints the namespace of a metadata element that
// was declared on <domain> (virt-install's libosinfo entry) as a declaration on
// <metadata>, and libvirtxml keeps only what is inside <metadata>. Written back, the
// entry's prefix would be unbound and libvirt would store an empty <metadata/>: the
// first update of every virt-install domain erased its libosinfo record. Here each
// top-level metadata element gets the declarations of the prefixes it uses.
func UnmarshalDomain(text string) (*libvirtxml.Domain, error) {
	var d libvirtxml.Domain
	if err := d.Unmarshal(text); err != nil {
		return nil, err
	}
	if d.Metadata != nil && strings.TrimSpace(d.Metadata.XML) != "" {
		if decls := metadataNamespaces(text); len(decls) > 0 {
			d.Metadata.XML = declareNamespaces(d.Metadata.XML, decls)
		}
	}
	return &d, nil
}

// metadataNamespaces are the namespace declarations (prefix → URI; "" is the default
// namespace) in scope inside the domain's <metadata>: those on <domain> and <metadata>.
func metadataNamespaces(text string) map[string]string {
	dec := tokenDecoder(text)
	decls := map[string]string{}
	depth := 0
	for {
		tok, err := dec.RawToken()
		if err != nil {
			return nil
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			if depth == 1 || (depth == 2 && t.Name.Space == "" && t.Name.Local == "metadata") {
				for _, a := range t.Attr {
					switch {
					case a.Name.Space == "xmlns":
						decls[a.Name.Local] = a.Value
					case a.Name.Space == "" && a.Name.Local == "xmlns":
						decls[""] = a.Value
					}
				}
			}
			if depth == 2 && t.Name.Local == "metadata" {
				return decls
			}
		case xml.EndElement:
			depth--
		}
	}
}

// declareNamespaces adds to each top-level element of inner the declarations of decls it
// uses (its own prefix or one inside it) and does not declare itself. The rest of the
// text stays byte for byte.
func declareNamespaces(inner string, decls map[string]string) string {
	type insert struct {
		at   int
		text string
	}
	var inserts []insert
	dec := tokenDecoder(inner)
	depth, start, nameEnd := 0, 0, 0
	var own map[string]bool
	for {
		off := int(dec.InputOffset())
		tok, err := dec.RawToken()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return inner // not well-formed alone: leave it as it was
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				start, own = off, map[string]bool{}
				nameEnd = off + 1 + len(qualified(t.Name))
				for _, a := range t.Attr {
					if a.Name.Space == "xmlns" {
						own[a.Name.Local] = true
					} else if a.Name.Space == "" && a.Name.Local == "xmlns" {
						own[""] = true
					}
				}
			}
			depth++
		case xml.EndElement:
			depth--
			if depth == 0 {
				element := inner[start:int(dec.InputOffset())]
				if add := neededDeclarations(element, decls, own); add != "" {
					inserts = append(inserts, insert{at: nameEnd, text: add})
				}
			}
		}
	}
	var b strings.Builder
	last := 0
	for _, in := range inserts {
		b.WriteString(inner[last:in.at])
		b.WriteString(in.text)
		last = in.at
	}
	b.WriteString(inner[last:])
	return b.String()
}

// neededDeclarations are the declarations element uses (prefix: seen as "<prefix:" or
// " prefix:" in it; the default namespace: an unprefixed root) but does not make.
func neededDeclarations(element string, decls map[string]string, own map[string]bool) string {
	var prefixes []string
	for p := range decls {
		if own[p] {
			continue
		}
		if p == "" {
			if root := strings.TrimPrefix(element, "<"); !strings.Contains(strings.SplitN(root, " ", 2)[0], ":") {
				prefixes = append(prefixes, p)
			}
			continue
		}
		if strings.Contains(element, "<"+p+":") || strings.Contains(element, " "+p+":") {
			prefixes = append(prefixes, p)
		}
	}
	sort.Strings(prefixes)
	var b strings.Builder
	for _, p := range prefixes {
		name := "xmlns"
		if p != "" {
			name += ":" + p
		}
		var uri strings.Builder
		_ = xml.EscapeText(&uri, []byte(decls[p]))
		fmt.Fprintf(&b, ` %s="%s"`, name, uri.String())
	}
	return b.String()
}

func qualified(n xml.Name) string {
	if n.Space == "" {
		return n.Local
	}
	return n.Space + ":" + n.Local
}

// tokenDecoder reads text as XML tokens: encoding/xml reads no DTD and expands no entity
// beyond XML's own five.
func tokenDecoder(text string) *xml.Decoder {
	return xml.NewDecoder(strings.NewReader(text)) //nolint:gosec,nolintlint // G709 (taint analysis) comes and goes; plain tokens
}
