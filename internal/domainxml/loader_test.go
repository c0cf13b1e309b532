package domainxml

import (
	"strings"
	"testing"
)

// TestLoader: a hand-chosen pflash loader and its nvram replace auto-selection and read
// back as written (what was left to libvirt matches anything); a change restarts; an
// empty one takes it away (auto-selection again for uefi); the combinations libvirt or
// the firmware attribute contradict are refused by name; auto-selection's loader is
// never read as the user's.
func TestLoader(t *testing.T) {
	yes := true
	s := Spec{Name: "l", Type: "qemu", VCPU: 1, MemoryKiB: 128 * KiBPerMiB, Machine: "q35", Firmware: FirmwareUEFI,
		Loader: &Loader{Path: "/usr/share/OVMF/OVMF_CODE_4M.fd", Type: LoaderPflash, Readonly: &yes},
		NVRam:  &NVRam{Template: "/usr/share/OVMF/OVMF_VARS_4M.fd"}}
	d, text := build(t, nil, s)
	flat := strings.Join(strings.Fields(text), " ")
	for _, w := range []string{`<loader readonly="yes" type="pflash">/usr/share/OVMF/OVMF_CODE_4M.fd</loader>`,
		`<nvram template="/usr/share/OVMF/OVMF_VARS_4M.fd"></nvram>`} {
		if !strings.Contains(flat, w) {
			t.Errorf("missing %s:\n%s", w, text)
		}
	}
	if d.OS.Firmware != "" {
		t.Errorf("auto-selection kept: %q", d.OS.Firmware)
	}
	// libvirt fills in the nvram path: not a change.
	d.OS.NVRam.NVRam = "/var/lib/libvirt/qemu/nvram/l_VARS.fd"
	p, _ := FromDomain(d)
	if p.Spec.Loader == nil || p.Spec.NVRam == nil || p.Spec.NVRam.Path == "" || p.Spec.Firmware != FirmwareUEFI {
		t.Fatalf("read back %+v %+v %q", p.Spec.Loader, p.Spec.NVRam, p.Spec.Firmware)
	}
	if !loaderFamily.same(p.Spec, s) || !osFamily.same(p.Spec, s) {
		t.Errorf("read back differs: %+v %+v", p.Spec.Loader, p.Spec.NVRam)
	}
	other := p.Spec
	other.Loader = &Loader{Path: "/usr/share/OVMF/OVMF_CODE_4M.secboot.fd", Type: LoaderPflash}
	if c := Classify(p.Spec, other, true, true); c != ChangeRestart || loaderFamily.same(p.Spec, other) {
		t.Errorf("another loader: %s", c)
	}
	if c := Classify(p.Spec, p.Spec, true, true); c != ChangeNone {
		t.Errorf("itself: %s", c)
	}
	// Taken away: firmware = "uefi" is auto-selection again.
	auto := s
	auto.Loader, auto.NVRam = &Loader{}, nil
	d2, _ := build(t, d, auto)
	if d2.OS.Loader != nil || d2.OS.NVRam != nil || d2.OS.Firmware != "efi" {
		t.Errorf("removed: %+v %+v %q", d2.OS.Loader, d2.OS.NVRam, d2.OS.Firmware)
	}
	if p, _ := FromDomain(d2); p.Spec.Loader != nil {
		t.Errorf("auto-selection read as a hand-chosen loader: %+v", p.Spec.Loader)
	}
	// nil keeps it (libvirt_clone, libvirt_cluster_machine).
	keep := s
	keep.Loader, keep.NVRam = nil, nil
	if d3, _ := build(t, d, keep); d3.OS.Loader == nil || d3.OS.Loader.Path != s.Loader.Path {
		t.Errorf("nil did not keep: %+v", d3.OS.Loader)
	}
	for want, mod := range map[string]func(*Spec){
		`os.loader.type = "pflash" is UEFI firmware`:        func(s *Spec) { s.Firmware = FirmwareBIOS },
		`needs its type = "pflash"`:                         func(s *Spec) { s.Loader.Type = "" },
		`os.loader.path must be an absolute path`:           func(s *Spec) { s.Loader.Path = "OVMF.fd" },
		`os.loader.type = "flash"`:                          func(s *Spec) { s.Loader.Type = "flash" },
		`set os.loader.secure = true`:                       func(s *Spec) { s.SecureBoot = &SecureBoot{Enabled: true} },
		`os.nvram is a hand-chosen loader's variable store`: func(s *Spec) { s.Loader = nil },
	} {
		c := s
		l := *s.Loader
		c.Loader = &l
		mod(&c)
		if err := ValidateLoader(&c); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", want, err)
		}
	}
}
