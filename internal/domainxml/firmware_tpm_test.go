package domainxml

import (
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"
)

// TestFirmwareTPMFixture: the live definition libvirt 9.0 returned for a started
// secure-boot + TPM emulator domain (loader, nvram template and alias filled in) reads
// back as the spec that made it, and rebuilding it onto itself changes nothing.
func TestFirmwareTPMFixture(t *testing.T) {
	d, p := readFixture(t, "testdata/firmware_tpm_libvirt.xml")
	s := p.Spec
	if s.Firmware != FirmwareUEFI || s.SecureBoot == nil || *s.SecureBoot != (SecureBoot{Enabled: true, EnrolledKeys: true}) {
		t.Fatalf("firmware %q secure boot %+v", s.Firmware, s.SecureBoot)
	}
	if s.TPM == nil || *s.TPM != (TPM{Model: "tpm-crb", Backend: TPMEmulator, Version: "2.0", PersistentState: true}) {
		t.Fatalf("tpm %+v", s.TPM)
	}
	if s.Features == nil || !*s.Features.SMM {
		t.Fatalf("smm: %+v", s.Features)
	}
	want := s
	want.SecureBoot, want.TPM = &SecureBoot{Enabled: true, EnrolledKeys: true}, &TPM{Model: "tpm-crb", Backend: TPMEmulator, PersistentState: true}
	if Classify(s, want, true, true) != ChangeNone {
		t.Error("the spec that made it differs from what libvirt returned")
	}
	out, text := build(t, d, want)
	if out.OS.Loader == nil || out.OS.NVRam == nil || out.Devices.TPMs[0].Alias == nil {
		t.Errorf("an unchanged rebuild dropped what libvirt filled in:\n%s", text)
	}
}

func TestSecureBootBuild(t *testing.T) {
	base := Spec{Name: "sb", Type: "qemu", VCPU: 1, MemoryKiB: 128 * KiBPerMiB, Machine: "q35", Firmware: FirmwareUEFI}
	s := base
	s.SecureBoot = &SecureBoot{Enabled: true}
	d, text := build(t, nil, s)
	for _, w := range []string{`<os firmware="efi">`, `<feature enabled="yes" name="secure-boot">`,
		`<feature enabled="no" name="enrolled-keys">`, `<smm state="on">`} {
		if !strings.Contains(text, w) {
			t.Errorf("missing %s:\n%s", w, text)
		}
	}
	p, _ := Parse(text)
	if !secureBootFamily.same(p.Spec, s) || p.Spec.SecureBoot.EnrolledKeys {
		t.Errorf("round trip %+v", p.Spec.SecureBoot)
	}
	// Keys enrolled: a restart, and loader/nvram are chosen afresh.
	keys := s
	keys.SecureBoot = &SecureBoot{Enabled: true, EnrolledKeys: true}
	if c := Classify(s, keys, true, true); c != ChangeRestart {
		t.Errorf("enrolled_keys change: %s", c)
	}
	d.OS.Loader, d.OS.NVRam = fixtureLoader(), nil
	d2, text := build(t, d, keys)
	if d2.OS.Loader != nil || !strings.Contains(text, `<feature enabled="yes" name="enrolled-keys">`) {
		t.Errorf("keys: %s", text)
	}
	// Off again: the features go, smm stays (features own it), firmware stays uefi.
	off := base
	off.SecureBoot = &SecureBoot{}
	_, text = build(t, d2, off)
	if strings.Contains(text, "secure-boot") || !strings.Contains(text, `<smm state="on">`) || !strings.Contains(text, `firmware="efi"`) {
		t.Errorf("off: %s", text)
	}
	// nil keeps (clones, cluster machines): a secure-boot domain stays one.
	_, text = build(t, d2, base)
	if !strings.Contains(text, "secure-boot") {
		t.Errorf("nil took secure boot away: %s", text)
	}
	if !secureBootFamily.same(p.Spec, base) || secureBootFamily.same(p.Spec, off) || !secureBootFamily.same(Spec{}, off) {
		t.Error("same")
	}
}

// fixtureLoader is a loader libvirt chose.
func fixtureLoader() *libvirtxml.DomainLoader {
	return &libvirtxml.DomainLoader{Path: "/usr/share/OVMF/OVMF_CODE_4M.ms.fd", Readonly: "yes", Secure: "yes", Type: "pflash"}
}

func TestValidateSecureBoot(t *testing.T) {
	ok := Spec{Name: "v", Machine: "pc-q35-7.2", Firmware: FirmwareUEFI, SecureBoot: &SecureBoot{Enabled: true}}
	if err := ValidateSecureBoot(&ok); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		mod  func(*Spec)
		want string
	}{
		"bios":     {func(s *Spec) { s.Firmware = FirmwareBIOS }, `os.secure_boot needs firmware = "uefi" (it is "bios")`},
		"pc":       {func(s *Spec) { s.Machine = "pc" }, `secure_boot needs a q35 machine`},
		"i440fx":   {func(s *Spec) { s.Machine = "pc-i440fx-7.2" }, `set os.machine = "q35"`},
		"default":  {func(s *Spec) { s.Machine = "" }, `secure_boot needs a q35 machine`},
		"smm off":  {func(s *Spec) { s.Features = &Features{SMM: boolp(false)} }, `features.smm = false`},
		"disabled": {func(s *Spec) { s.SecureBoot, s.Machine = &SecureBoot{}, "pc" }, ""},
	} {
		s := ok
		tc.mod(&s)
		err := ValidateSecureBoot(&s)
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}

func TestTPMBuild(t *testing.T) {
	base := Spec{Name: "t", Type: "qemu", VCPU: 1, MemoryKiB: 128 * KiBPerMiB}
	for name, tc := range map[string]struct {
		tpm  TPM
		want []string
	}{
		"emulator":    {TPM{Model: "tpm-crb", Backend: TPMEmulator, PersistentState: true}, []string{`<tpm model="tpm-crb">`, `<backend type="emulator" version="2.0" persistent_state="yes">`}},
		"transient":   {TPM{Model: "tpm-tis", Backend: TPMEmulator, Version: "2.0"}, []string{`<tpm model="tpm-tis">`, `<backend type="emulator" version="2.0">`}},
		"passthrough": {TPM{Model: "tpm-tis", Backend: TPMPassthrough, DevicePath: "/dev/tpm0"}, []string{`<backend type="passthrough">`, `<device path="/dev/tpm0">`}},
	} {
		s := base
		tpm := tc.tpm
		s.TPM = &tpm
		if err := s.Validate(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		_, text := build(t, nil, s)
		for _, w := range tc.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: missing %s:\n%s", name, w, text)
			}
		}
		p, _ := Parse(text)
		if !tpmFamily.same(p.Spec, s) || !tpmFamily.same(s, p.Spec) {
			t.Errorf("%s: round trip %+v", name, p.Spec.TPM)
		}
	}
	s := base
	s.TPM = &TPM{Model: "tpm-crb", Backend: TPMEmulator}
	d, _ := build(t, nil, s)
	tis := s
	tis.TPM = &TPM{Model: "tpm-tis", Backend: TPMEmulator}
	if Classify(s, tis, true, true) != ChangeRestart {
		t.Error("a model change must restart")
	}
	if _, text := build(t, d, base); !strings.Contains(text, "<tpm") {
		t.Error("nil took the TPM away")
	}
	none := base
	none.TPM = &TPM{}
	if _, text := build(t, d, none); strings.Contains(text, "<tpm") {
		t.Error("an empty TPM kept it")
	}
	for _, bad := range []TPM{
		{Model: "tpm-spapr", Backend: TPMEmulator}, {Model: "tpm-crb", Backend: TPMPassthrough},
		{Model: "tpm-crb", Backend: TPMEmulator, DevicePath: "/dev/tpm0"},
	} {
		s := base
		s.TPM = &bad
		if s.Validate() == nil {
			t.Errorf("%+v validates", bad)
		}
	}
}
