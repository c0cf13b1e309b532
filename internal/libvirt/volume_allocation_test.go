package libvirt

import (
	"strings"
	"testing"
)

// Without allocation_bytes the volume XML has no <allocation>, as before: libvirt then
// reserves the whole capacity (thick). 0 asks for a sparse volume; more than the capacity
// (one taken from a smaller source) is cut to it.
func TestVolumeXMLAllocation(t *testing.T) {
	zero, big := uint64(0), uint64(1<<30)
	for _, tt := range []struct {
		alloc *uint64
		want  string
	}{
		{nil, ""},
		{&zero, "<allocation unit=\"bytes\">0</allocation>"},
		{&big, "<allocation unit=\"bytes\">1048576</allocation>"},
	} {
		doc, err := volumeXML(VolumeSpec{Pool: "p", Name: "v", Format: "raw", Allocation: tt.alloc}, 1<<20, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tt.want == "" && strings.Contains(doc, "<allocation") || tt.want != "" && !strings.Contains(doc, tt.want) {
			t.Errorf("allocation %v: got\n%s\nwant %q", tt.alloc, doc, tt.want)
		}
	}
}
