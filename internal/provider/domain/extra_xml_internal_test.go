package domain

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// extra_xml in state: the prior's fragments the definition still has, as written (a
// changed one drops out: drift); null when the prior had none; on import every
// unmodelled element but libvirt's defaults.
func TestExtraXMLFromSpec(t *testing.T) {
	clock := `<clock offset='utc'><timer name='rtc' tickpolicy='catchup'/></clock>`
	s := domainxml.Spec{Name: "e", ExtraXML: []string{
		`<memtune><hard_limit unit='KiB'>1048576</hard_limit></memtune>`, clock, `<resource><partition>/machine</partition></resource>`,
	}}
	prior := &Model{Name: types.StringValue("e")}
	if m := fromSpec(s, prior); !m.ExtraXML.IsNull() {
		t.Errorf("not written, but in state: %v", m.ExtraXML)
	}
	prior.ExtraXML = tfkit.StringList([]string{`<clock offset="utc"><timer name="rtc" tickpolicy="catchup" /></clock>`,
		`<memtune><hard_limit unit='KiB'>2097152</hard_limit></memtune>`})
	m := fromSpec(s, prior)
	if got := knownStrings(m.ExtraXML); len(got) != 1 || got[0] != knownStrings(prior.ExtraXML)[0] {
		t.Errorf("read back %q: want the clock as written, the changed memtune gone", got)
	}
	m = fromSpec(s, &Model{})
	if got := knownStrings(m.ExtraXML); len(got) != 2 || got[0] != s.ExtraXML[0] || got[1] != clock {
		t.Errorf("imported %q: want memtune and clock, not libvirt's default resource", got)
	}
}
