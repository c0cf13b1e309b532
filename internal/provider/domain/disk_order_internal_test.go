package domain

import (
	"os"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
)

func diskTargets(disks []domainxml.Disk) []string {
	var out []string
	for _, d := range disks {
		out = append(out, d.Target)
	}
	return out
}

// libvirt 9.0 returned this definition's disks as vda, vdc, vdb (vdb was written without
// a bus, so libvirt did not sort it among the virtio disks); redefined with the bus, it
// sorts them vda, vdb, vdc. Either way the disks read back in the order the
// configuration (prior) lists them.
func TestInPriorOrder_libvirtSortedDisks(t *testing.T) {
	text, err := os.ReadFile("../../domainxml/testdata/every_family_defaulted_libvirt.xml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := domainxml.Parse(string(text))
	if err != nil {
		t.Fatal(err)
	}
	asLibvirt := diskTargets(p.Spec.Disks)
	if want := []string{"vda", "vdc", "vdb", "sda", "hdb", "hdc"}; !slices.Equal(asLibvirt, want) {
		t.Fatalf("fixture disks %v, want %v", asLibvirt, want)
	}
	prior := func(targets ...string) *Model {
		m := &Model{}
		for _, tg := range targets {
			v := types.StringUnknown()
			if tg != "" {
				v = types.StringValue(tg)
			}
			m.Disks = append(m.Disks, diskModel{Target: v})
		}
		return m
	}
	sorted := slices.Clone(p.Spec.Disks)
	sorted[1], sorted[2] = sorted[2], sorted[1] // as libvirt has them after a redefine
	for name, tc := range map[string]struct {
		prior *Model
		want  []string
	}{
		"the imported order is kept":          {prior(asLibvirt...), asLibvirt},
		"targets not known yet fill in order": {prior("vda", "", "", "sda", "hdb", "hdc"), []string{"vda", "vdb", "vdc", "sda", "hdb", "hdc"}},
		"a disk prior lacks comes last":       {prior("vda", "vdc"), []string{"vda", "vdc", "vdb", "sda", "hdb", "hdc"}},
	} {
		if got := diskTargets(inPriorOrder(sorted, tc.prior)); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
	if got := diskTargets(inPriorOrder(p.Spec.Disks, nil)); !slices.Equal(got, asLibvirt) {
		t.Errorf("no prior: %v", got)
	}
	// Through fromSpec: the tuning read with each disk is its own, whatever the order.
	s := p.Spec
	s.Disks = sorted
	m := &Model{}
	domainDisks.fromSpec(s, prior(asLibvirt...), m)
	if m.Disks[1].Target.ValueString() != "vdc" || m.Disks[1].Network == nil || m.Disks[2].Path.IsNull() {
		t.Errorf("fromSpec: disk 1 %v (network %v), disk 2 path %v", m.Disks[1].Target, m.Disks[1].Network, m.Disks[2].Path)
	}
}
