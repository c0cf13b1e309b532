package domainxml

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

// xmlNode is a generic XML element, for the raw fragments of device_xml: read and written
// with encoding/xml, compared by has. Domain XML itself goes through libvirtxml.
type xmlNode struct {
	XMLName xml.Name
	Attrs   []xml.Attr `xml:",any,attr"`
	Text    string     `xml:",chardata"`
	Nodes   []xmlNode  `xml:",any"`
}

func xmlName(local string) xml.Name { return xml.Name{Local: local} }

// parseNode reads text as exactly one element, space around it allowed. A comment, a
// processing instruction (an <?xml?> declaration too) or a directive (a DOCTYPE) anywhere
// is refused: libvirt would drop it, and a DOCTYPE could declare entities.
func parseNode(text string) (*xmlNode, error) {
	if err := plainElements(text); err != nil {
		return nil, err
	}
	dec := xml.NewDecoder(strings.NewReader(text))
	var n *xmlNode
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if n != nil {
				return nil, errors.New("more than one element")
			}
			n = &xmlNode{}
			if err := dec.DecodeElement(n, &t); err != nil {
				return nil, err
			}
		case xml.CharData:
			if strings.TrimSpace(string(t)) != "" {
				return nil, errors.New("text outside the element")
			}
		case xml.ProcInst, xml.Directive:
			return nil, errors.New("a processing instruction or directive")
		}
	}
	if n == nil {
		return nil, errors.New("no element")
	}
	return n, nil
}

// plainElements refuses a comment, a processing instruction or a directive anywhere in text.
func plainElements(text string) error {
	dec := xml.NewDecoder(strings.NewReader(text))
	for {
		tok, err := dec.RawToken()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.Comment:
			return errors.New("a comment (<!-- -->): remove it")
		case xml.ProcInst:
			return fmt.Errorf("a processing instruction (<?%s ...?>): remove it", t.Target)
		case xml.Directive:
			return errors.New("a directive (<!DOCTYPE ...> or similar): remove it")
		}
	}
}

// writeNode writes n (and its children) to w.
func writeNode(w io.Writer, n xmlNode) error {
	enc := xml.NewEncoder(w)
	if err := enc.Encode(n); err != nil {
		return err
	}
	return enc.Flush()
}

// has says whether n has everything want says: the same name, each of want's attributes
// with the same value, want's text (when not blank), and for each of want's children a
// distinct child of n that has it. What n has beyond that (libvirt's fills) is ignored.
func (n xmlNode) has(want *xmlNode) bool {
	if n.XMLName.Local != want.XMLName.Local {
		return false
	}
	for _, a := range want.Attrs {
		if v, ok := n.attr(a.Name.Local); !ok || v != a.Value {
			return false
		}
	}
	if t := strings.TrimSpace(want.Text); t != "" && t != strings.TrimSpace(n.Text) {
		return false
	}
	used := make([]bool, len(n.Nodes))
	for i := range want.Nodes {
		found := false
		for j := range n.Nodes {
			if !used[j] && n.Nodes[j].has(&want.Nodes[i]) {
				used[j], found = true, true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func (n xmlNode) attr(name string) (string, bool) {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value, true
		}
	}
	return "", false
}
