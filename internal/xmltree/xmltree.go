// Package xmltree compares XML documents as canonical trees, for the tests that prove a
// domain survives adoption (issue #25): attribute order, whitespace-only text, leading and
// trailing whitespace of text, namespace prefixes (URIs are compared) and comments do not
// count; element order does. It is test support; the provider writes XML only through
// libvirtxml.
package xmltree

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Node is one element of a canonical XML tree: namespaces resolved to their URI,
// namespace declarations dropped, attributes sorted, whitespace-only text dropped and
// other text trimmed.
type Node struct {
	Name     string
	Attrs    []string // name="value", sorted
	Text     string
	Children []*Node
}

// prefixes names the namespaces the fixtures use, to keep the paths readable.
var prefixes = map[string]string{
	"http://libvirt.org/schemas/domain/qemu/1.0": "qemu",
}

func qname(n xml.Name) string {
	if n.Space == "" {
		return n.Local
	}
	if p, ok := prefixes[n.Space]; ok {
		return p + ":" + n.Local
	}
	return "{" + n.Space + "}" + n.Local
}

func Parse(doc []byte) (*Node, error) {
	dec := xml.NewDecoder(bytes.NewReader(doc))
	var stack []*Node
	var root *Node
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			n := &Node{Name: qname(tok.Name)}
			for _, a := range tok.Attr {
				if a.Name.Space == "xmlns" || (a.Name.Space == "" && a.Name.Local == "xmlns") {
					continue
				}
				n.Attrs = append(n.Attrs, fmt.Sprintf("%s=%q", qname(a.Name), a.Value))
			}
			sort.Strings(n.Attrs)
			if len(stack) > 0 {
				p := stack[len(stack)-1]
				p.Children = append(p.Children, n)
			} else if root == nil {
				root = n
			} else {
				return nil, errors.New("more than one root element")
			}
			stack = append(stack, n)
		case xml.EndElement:
			top := stack[len(stack)-1]
			top.Text = strings.TrimSpace(top.Text)
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].Text += string(tok)
			}
		}
	}
	if root == nil {
		return nil, errors.New("no root element")
	}
	return root, nil
}

// canonical writes n as one string: equal strings mean equal trees.
func (n *Node) canonical(b *strings.Builder) {
	b.WriteString("<" + n.Name)
	for _, a := range n.Attrs {
		b.WriteString(" " + a)
	}
	b.WriteString(">")
	if n.Text != "" {
		fmt.Fprintf(b, "%q", n.Text)
	}
	for _, c := range n.Children {
		c.canonical(b)
	}
	b.WriteString("</" + n.Name + ">")
}

func (n *Node) String() string {
	var b strings.Builder
	n.canonical(&b)
	return b.String()
}

// leaves records every element path (value ""), every attribute (key path/@name) and
// every text (key path/text()) of the tree with its value, as a multiset per key.
func (n *Node) leaves(prefix string, m map[string][]string) {
	p := prefix + "/" + n.Name
	m[p] = append(m[p], "")
	for _, a := range n.Attrs {
		name, val, _ := strings.Cut(a, "=")
		m[p+"/@"+name] = append(m[p+"/@"+name], val)
	}
	if n.Text != "" {
		m[p+"/text()"] = append(m[p+"/text()"], fmt.Sprintf("%q", n.Text))
	}
	for _, c := range n.Children {
		c.leaves(p, m)
	}
}

// minus returns the values of a not matched by one in b (multiset difference).
func minus(a, b []string) []string {
	left := map[string]int{}
	for _, v := range b {
		left[v]++
	}
	var out []string
	for _, v := range a {
		if left[v] > 0 {
			left[v]--
			continue
		}
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// sameNumbers says whether two lists of quoted values are the same numbers written
// differently (0x8 and 8, 0xBEEF and 0xbeef).
func sameNumbers(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	num := func(vs []string) ([]int64, bool) {
		var out []int64
		for _, v := range vs {
			u, err := strconv.Unquote(v)
			if err != nil {
				return nil, false
			}
			n, err := strconv.ParseInt(u, 0, 64)
			if err != nil {
				return nil, false
			}
			out = append(out, n)
		}
		slices.Sort(out)
		return out, true
	}
	an, ok1 := num(a)
	bn, ok2 := num(b)
	return ok1 && ok2 && slices.Equal(an, bn)
}

func childNames(n *Node) string {
	names := make([]string, len(n.Children))
	for i, c := range n.Children {
		names[i] = c.Name
	}
	return strings.Join(slices.Compact(names), ",")
}

// reordered returns, for elements whose children are the same multiset in another
// order, the path and both orders of the children's names.
func reordered(a, b *Node, prefix string, out *[]string) {
	p := prefix + "/" + a.Name
	if a.String() == b.String() || len(a.Children) != len(b.Children) {
		return
	}
	ac := make([]string, len(a.Children))
	bc := make([]string, len(b.Children))
	for i := range a.Children {
		ac[i] = a.Children[i].String()
		bc[i] = b.Children[i].String()
	}
	if !slices.Equal(ac, bc) {
		as := slices.Clone(ac)
		bs := slices.Clone(bc)
		sort.Strings(as)
		sort.Strings(bs)
		if slices.Equal(as, bs) {
			*out = append(*out, fmt.Sprintf("%s: [%s] -> [%s]", p, childNames(a), childNames(b)))
			return
		}
	}
	for i := range a.Children {
		if a.Children[i].Name == b.Children[i].Name {
			reordered(a.Children[i], b.Children[i], p, out)
		}
	}
}

// Diff compares two documents as canonical trees and describes the
// differences (nil when equal), one line per path:
//
//	lost P (xN)          element P is gone (what was under it is not listed again)
//	added P (xN)         element P appears only in the round trip
//	lost K: V...         attribute or text K lost these values
//	added K: V...        attribute or text K gained these values
//	changed K: V -> W    attribute or text K has other values
//	reformatted K: V -> W  the same numbers written differently
//	reordered P: [a,b] -> [b,a]  the same children in another order (found where
//	                             both sides have the same children at P)
func Diff(orig, back []byte) ([]string, error) {
	a, err := Parse(orig)
	if err != nil {
		return nil, fmt.Errorf("parse original: %w", err)
	}
	b, err := Parse(back)
	if err != nil {
		return nil, fmt.Errorf("parse round trip: %w", err)
	}
	return DiffTrees(a, b), nil
}

// DiffTrees is Diff on parsed trees.
func DiffTrees(a, b *Node) []string {
	if a.String() == b.String() {
		return nil
	}
	am := map[string][]string{}
	bm := map[string][]string{}
	a.leaves("", am)
	b.leaves("", bm)
	keys := map[string]bool{}
	for k := range am {
		keys[k] = true
	}
	for k := range bm {
		keys[k] = true
	}
	// Elements wholly missing on one side: their contents are not listed again.
	var goneA, goneB []string
	for k := range keys {
		if len(bm[k]) == 0 && len(am[k]) > 0 && !strings.Contains(k, "/@") && !strings.HasSuffix(k, "/text()") {
			goneA = append(goneA, k+"/")
		}
		if len(am[k]) == 0 && len(bm[k]) > 0 && !strings.Contains(k, "/@") && !strings.HasSuffix(k, "/text()") {
			goneB = append(goneB, k+"/")
		}
	}
	under := func(k string, roots []string) bool {
		for _, r := range roots {
			if strings.HasPrefix(k, r) {
				return true
			}
		}
		return false
	}
	var out []string
	for k := range keys {
		if under(k, goneA) || under(k, goneB) {
			continue
		}
		lost := minus(am[k], bm[k])
		added := minus(bm[k], am[k])
		isElem := !strings.Contains(k, "/@") && !strings.HasSuffix(k, "/text()")
		switch {
		case len(lost) == 0 && len(added) == 0:
		case isElem && len(lost) > 0:
			out = append(out, fmt.Sprintf("lost %s (x%d)", k, len(lost)))
		case isElem:
			out = append(out, fmt.Sprintf("added %s (x%d)", k, len(added)))
		case len(added) == 0:
			out = append(out, fmt.Sprintf("lost %s: %s", k, strings.Join(lost, " ")))
		case len(lost) == 0:
			out = append(out, fmt.Sprintf("added %s: %s", k, strings.Join(added, " ")))
		case sameNumbers(lost, added):
			out = append(out, fmt.Sprintf("reformatted %s: %s -> %s", k, strings.Join(lost, " "), strings.Join(added, " ")))
		default:
			out = append(out, fmt.Sprintf("changed %s: %s -> %s", k, strings.Join(lost, " "), strings.Join(added, " ")))
		}
	}
	var paths []string
	reordered(a, b, "", &paths)
	for _, p := range paths {
		out = append(out, "reordered "+p)
	}
	if len(out) == 0 {
		out = append(out, "reordered (somewhere)")
	}
	sort.Strings(out)
	return out
}

// Attr returns the value of n's attribute name (a qualified name as Parse writes it).
func (n *Node) Attr(name string) (string, bool) {
	for _, a := range n.Attrs {
		k, v, _ := strings.Cut(a, "=")
		if k == name {
			u, err := strconv.Unquote(v)
			return u, err == nil
		}
	}
	return "", false
}

// Child returns n's first child element called name, or nil.
func (n *Node) Child(name string) *Node {
	for _, c := range n.Children {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Remove deletes, under n, every element for which drop says so; path is the element's
// path from the root without indices (/domain/devices/disk/address).
func (n *Node) Remove(drop func(path string, e *Node) bool) {
	n.remove("/"+n.Name, drop)
}

func (n *Node) remove(path string, drop func(string, *Node) bool) {
	kept := n.Children[:0]
	for _, c := range n.Children {
		p := path + "/" + c.Name
		if drop(p, c) {
			continue
		}
		c.remove(p, drop)
		kept = append(kept, c)
	}
	n.Children = kept
}

// DropAttr removes attribute name from n.
func (n *Node) DropAttr(name string) {
	n.Attrs = slices.DeleteFunc(n.Attrs, func(a string) bool {
		k, _, _ := strings.Cut(a, "=")
		return k == name
	})
}

// Leaves returns every element path (value ""), attribute (path/@name) and text
// (path/text()) of the tree with its values, a multiset per key.
func (n *Node) Leaves() map[string][]string {
	m := map[string][]string{}
	n.leaves("", m)
	return m
}
