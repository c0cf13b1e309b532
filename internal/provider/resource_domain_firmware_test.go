package provider_test

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// tpmReadClock sends TPM2_ReadClock to the guest's /dev/tpm0 (one write, one read on
// the same open file, as the kernel's TPM device wants) and returns the clock (ms the
// TPM has been powered, saved in its NV state) and resetCount (TPM resets — each start of
// the domain — since the state was made). resetCount is the proof: a new state starts it
// again (at 2 here, after swtpm_setup's own startups).
func tpmReadClock(t *testing.T, name string) (clock uint64, resets uint32, err error) {
	out, err := acctest.GuestExec(t, name, "/bin/sh", "-c",
		`exec 3<>/dev/tpm0 && printf '\200\001\000\000\000\012\000\000\001\201' >&3 && dd bs=4096 count=1 <&3 2>/dev/null | od -An -tx1 -v`)
	if err != nil {
		return 0, 0, err
	}
	b, err := hex.DecodeString(strings.Join(strings.Fields(out), ""))
	if err != nil || len(b) < 35 || binary.BigEndian.Uint32(b[6:10]) != 0 {
		return 0, 0, fmt.Errorf("TPM2_ReadClock in %s answered %q (%v)", name, out, err)
	}
	// header(10) time(8) clock(8) resetCount(4) restartCount(4) safe(1)
	return binary.BigEndian.Uint64(b[18:26]), binary.BigEndian.Uint32(b[26:30]), nil
}

// tpmGrew checks that the guest sees a TPM 2.0 whose clock and resetCount are past
// *clock and *resets (-1 at first), and records them.
func tpmGrew(t *testing.T, name string, clock *uint64, resets *int64) resource.TestCheckFunc {
	return acctest.HostCheck(func() error {
		acctest.WaitForAgent(t, name)
		out, err := acctest.GuestExec(t, name, "/bin/cat", "/sys/class/tpm/tpm0/tpm_version_major")
		if err != nil || strings.TrimSpace(out) != "2" {
			return fmt.Errorf("the guest sees no TPM 2.0 at /sys/class/tpm/tpm0: %q %v", out, err)
		}
		c, r, err := tpmReadClock(t, name)
		if err != nil {
			return err
		}
		t.Logf("TPM clock %d ms, resetCount %d", c, r)
		if int64(r) <= *resets || c < *clock {
			return fmt.Errorf("TPM of %s: resetCount %d, clock %d after resetCount %d, clock %d: its state is new", name, r, c, *resets, *clock)
		}
		*clock, *resets = c, int64(r)
		return nil
	})
}

// tpmGuestHCL is the booted test guest with an emulated TPM.
func tpmGuestHCL(name, disk string, vcpu int, running bool) string {
	return acctest.ProviderBlock("") + domainHCL(name, disk, attr("vcpu", vcpu), attr("running", running), `graphics = { type = "none" }`,
		`devices = { tpm = {} }`, `shutdown = { timeout = "30s" }`)
}

// The must-show: the guest sees the emulated TPM 2.0; its state survives a vCPU
// update, which redefines the domain (same UUID) and restarts it: the TPM's resetCount
// goes up (and its clock does not go back), where a new state would start it again (tried
// by hand: with the state directory removed between two starts, this check fails). Destroy
// removes the state from the host (/var/lib/libvirt/swtpm/<uuid>/).
func TestAccDomainTPM_booted(t *testing.T) {
	acctest.RequireAcc(t)
	name, disk := acctest.DomainDisk(t, "tpm")
	var uuid string
	var clock uint64
	resets := int64(-1)
	acctest.Run(t, resource.TestCase{
		CheckDestroy: func(s *terraform.State) error {
			return errors.Join(acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)})(s),
				acctest.CheckSwtpmState(&uuid, false)(s))
		},
		Steps: []resource.TestStep{
			{
				Config:           tpmGuestHCL(name, disk, 1, true),
				ConfigPlanChecks: acctest.Plans(),
				// tpm = {}: the defaults (tpm-crb, emulator, 2.0, persistent) stay out of state (v3).
				ConfigStateChecks: acctest.State(domRes, "devices.tpm.model", nil, "devices.tpm.backend", nil, "devices.tpm.version", nil,
					"devices.tpm.persistent_state", nil),
				Check: resource.ComposeTestCheckFunc(resource.TestCheckResourceAttrWith(domRes, "uuid", func(v string) error { uuid = v; return nil }),
					acctest.CheckSwtpmState(&uuid, true), tpmGrew(t, name, &clock, &resets)),
			},
			{Config: tpmGuestHCL(name, disk, 2, true), ConfigPlanChecks: acctest.Updates(domRes, "restart"), Check: tpmGrew(t, name, &clock, &resets)},
		},
	})
}

// firmwareHCL is a disk-less q35 UEFI domain with os (secure_boot beside the machine) and
// a devices line or two.
func firmwareHCL(name string, running bool, os string, lines ...string) string {
	return acctest.ProviderBlock("") + resourceHCL("libvirt_domain", "test", append([]string{attr("name", name), attr("vcpu", 1),
		attr("memory_mib", 64), attr("running", running), fmt.Sprintf(`os = { machine = "q35"%s }`, os), attr("firmware", "uefi"),
		`graphics = { type = "none" }`, `shutdown = { timeout = "5s" }`}, lines...)...)
}

// Secure Boot, started (the firmware runs; no OS): libvirt chose a secure, enrolled-keys
// build with its template, smm is on, and a second plan is empty.
func TestAccDomainSecureBoot_started(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("sboot")
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{{
			Config:            firmwareHCL(name, true, `, secure_boot = {}`),
			ConfigPlanChecks:  acctest.Plans(),
			ConfigStateChecks: acctest.State(domRes, "os.secure_boot.enrolled_keys", nil, "os.machine", "q35", "features", nil, "state", "running"),
			Check: acctest.HostCheck(func() error {
				d, err := acctest.InspectDomain(t, name)
				if err != nil {
					return err
				}
				os, f := d.Live.OS, d.Live.Features
				if os == nil || os.Loader == nil || os.Loader.Secure != "yes" || os.NVRam == nil || !strings.Contains(os.NVRam.Template, ".ms.") {
					return fmt.Errorf("live firmware of %s: %+v / %+v, want a secure loader with an enrolled-keys (.ms.) template", name, os.Loader, os.NVRam)
				}
				feats := map[string]string{}
				if os.FirmwareInfo != nil {
					for _, x := range os.FirmwareInfo.Features {
						feats[x.Name] = x.Enabled
					}
				}
				if feats["secure-boot"] != "yes" || feats["enrolled-keys"] != "yes" || f == nil || f.SMM == nil || f.SMM.State == "off" {
					return fmt.Errorf("live definition of %s: firmware features %v, smm %+v", name, feats, f)
				}
				return nil
			}),
		}},
	})
}

// Define-only: a tpm-tis emulator without persistent_state, then the host's TPM passed
// through (libvirt defines it although this host has no /dev/tpm0; only a start needs
// it) with secure boot without enrolled keys added; each imports as it is.
func TestAccDomainTPM_defineOnly(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("tpmdef")
	tpm := func(want ...string) resource.TestCheckFunc {
		return acctest.HostCheck(func() error {
			d, err := acctest.InspectDomain(t, name)
			if err != nil {
				return err
			}
			if len(d.Inactive.Devices.TPMs) != 1 {
				return fmt.Errorf("%s has TPMs %+v", name, d.Inactive.Devices.TPMs)
			}
			x, b := d.Inactive.Devices.TPMs[0], d.Inactive.Devices.TPMs[0].Backend
			got := []string{x.Model}
			switch {
			case b.Emulator != nil:
				got = append(got, "emulator", b.Emulator.Version, "persistent="+b.Emulator.PersistentState)
			case b.Passthrough != nil && b.Passthrough.Device != nil:
				got = append(got, "passthrough", b.Passthrough.Device.Path)
			}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				return fmt.Errorf("tpm of %s: %v, want %v", name, got, want)
			}
			return nil
		})
	}
	importStep := resource.TestStep{ResourceName: domRes, ImportState: true, ImportStateVerify: true, ImportStateId: name,
		// os.machine: the import writes libvirt's pc-q35-7.2 for the q35 written (it cannot know the alias).
		ImportStateVerifyIgnore: []string{"timeouts", "os.machine", "shutdown", "update_method"}}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{
				Config:            firmwareHCL(name, false, "", `devices = { tpm = { model = "tpm-tis", persistent_state = false } }`),
				ConfigPlanChecks:  acctest.Plans(),
				ConfigStateChecks: acctest.State(domRes, "devices.tpm.model", "tpm-tis", "devices.tpm.backend", nil, "features", nil),
				Check:             tpm("tpm-tis", "emulator", "2.0", "persistent="),
			},
			importStep,
			{
				// Secure boot added: smm goes on in the definition, features stays unwritten.
				Config: firmwareHCL(name, false, `, secure_boot = { enrolled_keys = false }`,
					`devices = { tpm = { model = "tpm-tis", backend = "passthrough", device_path = "/dev/tpm0" } }`),
				ConfigPlanChecks: acctest.Updates(domRes, "definition", acctest.PlanIs(domRes, "features", nil)),
				ConfigStateChecks: acctest.State(domRes, "devices.tpm.device_path", "/dev/tpm0", "devices.tpm.persistent_state", nil,
					"os.secure_boot.enrolled_keys", false, "features", nil),
				Check: tpm("tpm-tis", "passthrough", "/dev/tpm0"),
			},
			importStep,
		},
	})
}

// A domain virsh defined with Secure Boot and a TPM emulator imports, and what
// -generate-config-out writes for it plans clean.
func TestAccDomainFirmware_importDefined(t *testing.T) {
	acctest.RequireAcc(t)
	virshDefinedPlansClean(t, "fwimp", `  <os firmware='efi'><type arch='x86_64' machine='q35'>hvm</type>
    <firmware><feature enabled='yes' name='secure-boot'/><feature enabled='yes' name='enrolled-keys'/></firmware></os>
  <features><acpi/><apic/><smm state='on'/></features>
  <devices><tpm model='tpm-crb'><backend type='emulator' version='2.0'/></tpm></devices>`, "secure_boot", "tpm")
}
