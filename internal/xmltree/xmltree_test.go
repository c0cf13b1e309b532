package xmltree

import (
	"slices"
	"testing"
)

func TestDiff(t *testing.T) {
	same := [][2]string{
		{`<a x="1" y="2"><b>t</b></a>`, "<a y='2' x='1'>\n  <b> t </b>\n</a>"},
		{`<d xmlns:q="urn:q"><q:c v="1"/></d>`, `<d><c xmlns="urn:q" v="1"></c></d>`},
	}
	for _, c := range same {
		got, err := Diff([]byte(c[0]), []byte(c[1]))
		if err != nil || got != nil {
			t.Errorf("%s vs %s: %v %v, want equal", c[0], c[1], got, err)
		}
	}
	diff := []struct {
		a, b string
		want []string
	}{
		{`<a><b x="1"/></a>`, `<a><b/></a>`, []string{`lost /a/b/@x: "1"`}},
		{`<a><b/></a>`, `<a><b/><c y="1"/></a>`, []string{`added /a/c (x1)`}},
		{`<a><b>t</b></a>`, `<a><b>u</b></a>`, []string{`changed /a/b/text(): "t" -> "u"`}},
		{`<a><b p="0x8"/><b p="0xA"/></a>`, `<a><b p="10"/><b p="8"/></a>`, []string{`reformatted /a/b/@p: "0x8" "0xA" -> "10" "8"`}},
		{`<a><b/><c/></a>`, `<a><c/><b/></a>`, []string{`reordered /a: [b,c] -> [c,b]`}},
		{`<a xmlns:q="urn:q"><q:b><c/></q:b></a>`, `<a><b><c/></b></a>`, []string{`added /a/b (x1)`, `lost /a/{urn:q}b (x1)`}},
	}
	for _, c := range diff {
		got, err := Diff([]byte(c.a), []byte(c.b))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s vs %s: got %q, want %q", c.a, c.b, got, c.want)
		}
	}
}
