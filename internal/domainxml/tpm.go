package domainxml

import (
	"fmt"
	"reflect"
	"slices"

	"libvirt.org/go/libvirtxml"
)

// tpm: one TPM device, emulated by swtpm or passed through from the host. libvirt keeps
// an emulator's state in /var/lib/libvirt/swtpm/<uuid>/: a redefinition with the same
// UUID (every update) and a restart keep it; the provider's destroy undefines with
// VIR_DOMAIN_UNDEFINE_TPM, which removes it. A change restarts a running domain (QEMU
// has no TPM hot-plug).

// TPM models, backends and versions libvirt_domain writes.
var (
	TPMModels   = []string{"tpm-crb", "tpm-tis"}
	TPMBackends = []string{TPMEmulator, TPMPassthrough}
	// 1.2: an emulated TPM on the TIS interface only (libvirt refuses it on CRB).
	TPMVersions = []string{"2.0", "1.2"}
)

const (
	TPMEmulator    = "emulator"
	TPMPassthrough = "passthrough"
	DefaultTPM     = "tpm-crb"
	DefaultTPMVer  = "2.0"
)

// TPM is libvirt_domain's tpm; nil keeps the definition's TPM, one with an empty Backend
// (no tpm block) takes it away.
type TPM struct {
	Model   string
	Backend string // emulator or passthrough; empty: none
	Version string // emulator only
	// DevicePath is the host's TPM for passthrough, e.g. /dev/tpm0.
	DevicePath string
	// PersistentState writes persistent_state='yes': libvirt then keeps the emulator's
	// state even when the domain is undefined without VIR_DOMAIN_UNDEFINE_TPM (virsh
	// undefine), and when a transient domain stops.
	PersistentState bool
}

var tpmFamily = family{
	name:    "tpm",
	untyped: untypedTPMs,
	validate: func(s *Spec) error {
		t := s.TPM
		if t == nil || t.Backend == "" {
			return nil
		}
		switch {
		case !slices.Contains(TPMModels, t.Model):
			return fmt.Errorf("tpm model %q: must be one of %v", t.Model, TPMModels)
		case !slices.Contains(TPMBackends, t.Backend):
			return fmt.Errorf("tpm backend %q: must be one of %v", t.Backend, TPMBackends)
		case t.Backend == TPMPassthrough && t.DevicePath == "":
			return fmt.Errorf("tpm backend passthrough needs device_path (the host's TPM, e.g. /dev/tpm0)")
		case t.Backend != TPMPassthrough && t.DevicePath != "":
			return fmt.Errorf("tpm device_path is for backend = \"passthrough\" only (backend is %q)", t.Backend)
		case t.Backend == TPMEmulator && t.Version != "" && !slices.Contains(TPMVersions, t.Version):
			return fmt.Errorf("tpm version %q: must be one of %v", t.Version, TPMVersions)
		case t.Backend == TPMEmulator && t.Version == "1.2" && t.Model != "tpm-tis":
			return fmt.Errorf("tpm version 1.2 needs model tpm-tis (the CRB interface is TPM 2.0's)")
		}
		return nil
	},
	build: func(d *libvirtxml.Domain, s *Spec, _ *libvirtxml.Domain) error {
		t := s.TPM
		if t == nil {
			return nil
		}
		if d.Devices == nil {
			d.Devices = &libvirtxml.DomainDeviceList{}
		}
		// The TPMs the tpm attributes cannot say are device_xml's (or made elsewhere):
		// they stay, but where the spec wants one of its own and no fragment holds them.
		var keep *libvirtxml.DomainTPM
		var others []libvirtxml.DomainTPM
		for i, x := range d.Devices.TPMs {
			switch {
			case typedTPM(x) && keep == nil:
				keep = &d.Devices.TPMs[i]
			case !typedTPM(x) && (t.Backend == "" || heldByFragment(x, s.DeviceXML)):
				others = append(others, x)
			}
		}
		if t.Backend == "" {
			d.Devices.TPMs = others
			return nil
		}
		d.Devices.TPMs = append([]libvirtxml.DomainTPM{buildTPM(t, keep)}, others...)
		return nil
	},
	parse: func(d *libvirtxml.Domain, p *Parsed, _ *record) {
		if d.Devices == nil {
			return
		}
		for _, x := range d.Devices.TPMs {
			if typedTPM(x) {
				p.Spec.TPM = parseTPM(x)
				return
			}
		} // else nil: none (or device_xml's)
	},
	same:   func(a, b Spec) bool { return b.TPM == nil || normTPM(a.TPM) == normTPM(b.TPM) },
	derive: deriveTPM,
}

// deriveTPM: an emulated TPM's state is libvirt's per UUID (a clone starts with a fresh
// one, as a new machine would), unless the definition names a file or directory for
// it, which two swtpm instances cannot share: the clone's is then libvirt's default. A
// passed-through host TPM stays (one domain at a time can use it; libvirt says so at
// start).
func deriveTPM(d *libvirtxml.Domain, _ *CloneSpec) error {
	for i := range d.Devices.TPMs {
		if b := d.Devices.TPMs[i].Backend; b != nil && b.Emulator != nil {
			b.Emulator.Source = nil
		}
	}
	return nil
}

// buildTPM is the device t asks for; what libvirt or the user set beside it on the same
// kind of device (the alias, an emulator's encryption or PCR banks) is kept from keep.
func buildTPM(t *TPM, keep *libvirtxml.DomainTPM) libvirtxml.DomainTPM {
	out := libvirtxml.DomainTPM{Model: t.Model, Backend: &libvirtxml.DomainTPMBackend{}}
	if keep != nil && keep.Model == t.Model && keep.Backend != nil {
		out.Alias, out.ACPI, out.Address = keep.Alias, keep.ACPI, keep.Address
		if t.Backend == TPMEmulator && keep.Backend.Emulator != nil {
			e := *keep.Backend.Emulator
			out.Backend.Emulator = &e
		}
	}
	switch t.Backend {
	case TPMEmulator:
		if out.Backend.Emulator == nil {
			out.Backend.Emulator = &libvirtxml.DomainTPMBackendEmulator{}
		}
		e := out.Backend.Emulator
		e.Version = t.Version
		if e.Version == "" {
			e.Version = DefaultTPMVer
		}
		e.PersistentState = ""
		if t.PersistentState {
			e.PersistentState = "yes"
		}
	case TPMPassthrough:
		out.Backend.Passthrough = &libvirtxml.DomainTPMBackendPassthrough{
			Device: &libvirtxml.DomainTPMBackendDevice{Path: t.DevicePath}}
	}
	return out
}

func parseTPM(x libvirtxml.DomainTPM) *TPM {
	t := &TPM{Model: x.Model}
	if t.Model == "" {
		t.Model = "tpm-tis" // libvirt's default model on x86 when none is written
	}
	if b := x.Backend; b != nil {
		switch {
		case b.Emulator != nil:
			t.Backend, t.Version = TPMEmulator, b.Emulator.Version
			t.PersistentState = b.Emulator.PersistentState == "yes"
		case b.Passthrough != nil:
			t.Backend = TPMPassthrough
			if b.Passthrough.Device != nil {
				t.DevicePath = b.Passthrough.Device.Path
			}
		default:
			t.Backend = "external" // not one libvirt_domain writes: read so that it shows
		}
	}
	if t.Version == "" {
		t.Version = DefaultTPMVer
	}
	return t
}

// normTPM is t with defaults filled in (nil and no backend: no TPM).
func normTPM(t *TPM) TPM {
	if t == nil || t.Backend == "" {
		return TPM{}
	}
	n := *t
	if n.Version == "" || n.Backend == TPMPassthrough {
		n.Version = DefaultTPMVer
	}
	return n
}

// typedTPM says whether the tpm attributes say x exactly: a model they list, an emulator
// (version, persistent state) or a host TPM passed through, nothing else. One with an
// encrypted state, chosen PCR banks, a state file, a profile, an external backend, ...
// is device_xml's (untypedTPMs).
func typedTPM(x libvirtxml.DomainTPM) bool {
	if !slices.Contains(TPMModels, x.Model) || x.Backend == nil || x.ACPI != nil || userAlias(x.Alias) {
		return false
	}
	switch b := x.Backend; {
	case b.Emulator != nil:
		e := *b.Emulator
		e.Version, e.PersistentState = "", ""
		return reflect.DeepEqual(e, libvirtxml.DomainTPMBackendEmulator{})
	case b.Passthrough != nil:
		return b.Passthrough.Device != nil && b.Passthrough.Device.Path != ""
	}
	return false
}

// untypedTPMs: the tpm family's untyped hook.
func untypedTPMs(l *libvirtxml.DomainDeviceList) *libvirtxml.DomainDeviceList {
	var out libvirtxml.DomainDeviceList
	for _, x := range l.TPMs {
		if !typedTPM(x) {
			out.TPMs = append(out.TPMs, x)
		}
	}
	return &out
}
