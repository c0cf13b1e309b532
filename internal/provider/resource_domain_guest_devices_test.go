package provider_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// everyGuestDevice is the guest devices of the first step of TestAccDomain_guestDevices:
// several of the kinds libvirt allows several of.
const everyGuestDevice = `
  devices = {
    video      = [{ model = "virtio", heads = 2, accel3d = false }, { model = "virtio" }]
    rng        = [{ rate_bytes = 1024, rate_period_ms = 1000 }, { backend = "/dev/random" }]
    watchdog   = [{ model = "i6300esb", action = "poweroff" }]
    panic      = { model = "isa" }
    vsock      = {}
    memballoon = { model = "virtio", stats_period_sec = 10, autodeflate = true, free_page_reporting = true }
    sound      = [{ model = "ich9" }, { model = "ac97" }]
    input = [
      { type = "tablet", bus = "usb" },
      { type = "keyboard", bus = "virtio" },
      { type = "mouse", bus = "ps2" },
    ]
  }`

// changedGuestDevices: another video, a fixed vsock cid, the default watchdog action,
// a memballoon libvirt would add anyway; no rng, sound or inputs.
const changedGuestDevices = `
  devices = {
    video      = [{ model = "qxl" }]
    watchdog   = [{ model = "ib700" }]
    panic      = { model = "isa" }
    vsock      = { cid = 42 }
    memballoon = { model = "virtio" }
  }`

func guestDevicesConfig(name, devices string) string {
	return acctest.ProviderBlock("") + fmt.Sprintf(`
resource "libvirt_domain" "test" {
  name = %q
  %s
%s
}
`, name, idleDomain, devices)
}

// guestDevices checks the inactive definition of name with check.
func guestDevices(t *testing.T, name string, check func(d *libvirtxml.DomainDeviceList) error) resource.TestCheckFunc {
	return acctest.HostCheck(func() error {
		d, err := acctest.InspectDomain(t, name)
		if err != nil {
			return err
		}
		return check(d.Inactive.Devices)
	})
}

func inputsOf(d *libvirtxml.DomainDeviceList) string {
	var s []string
	for _, in := range d.Inputs {
		s = append(s, in.Type+"/"+in.Bus)
	}
	slices.Sort(s) // the inputs are a set
	return strings.Join(s, " ")
}

// A domain with every guest device: what libvirt stores, an empty second plan, a change
// and a removal that rewrite the definition (the domain is not running), and libvirt's
// own memballoon and ps2 inputs, which come back on their own, never showing as drift.
func TestAccDomain_guestDevices(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("guestdev")
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{
				Config:           guestDevicesConfig(name, everyGuestDevice),
				ConfigPlanChecks: acctest.Plans(),
				Check: guestDevices(t, name, func(d *libvirtxml.DomainDeviceList) error {
					switch v := d.Videos; {
					case len(v) != 2 || v[0].Model.Type != "virtio" || v[0].Model.Heads != 2 || v[0].Model.Accel == nil || v[0].Model.Accel.Accel3D != "no" ||
						v[1].Model.Type != "virtio":
						return fmt.Errorf("video: %+v", v)
					case len(d.RNGs) != 2 || d.RNGs[0].Rate == nil || d.RNGs[0].Rate.Bytes != 1024 || d.RNGs[0].Rate.Period != 1000 ||
						d.RNGs[0].Backend.Random == nil || d.RNGs[0].Backend.Random.Device != "/dev/urandom" ||
						d.RNGs[1].Backend.Random == nil || d.RNGs[1].Backend.Random.Device != "/dev/random":
						return fmt.Errorf("rng: %+v", d.RNGs)
					case len(d.Watchdogs) != 1 || d.Watchdogs[0].Model != "i6300esb" || d.Watchdogs[0].Action != "poweroff":
						return fmt.Errorf("watchdog: %+v", d.Watchdogs)
					case len(d.Panics) != 1 || d.Panics[0].Model != "isa":
						return fmt.Errorf("panic: %+v", d.Panics)
					case d.VSock == nil || d.VSock.CID == nil || d.VSock.CID.Auto != "yes":
						return fmt.Errorf("vsock: %+v", d.VSock)
					case d.MemBalloon == nil || d.MemBalloon.AutoDeflate != "on" || d.MemBalloon.FreePageReporting != "on" ||
						d.MemBalloon.Stats == nil || d.MemBalloon.Stats.Period != 10:
						return fmt.Errorf("memballoon: %+v", d.MemBalloon)
					case len(d.Sounds) != 2 || d.Sounds[0].Model != "ich9" || d.Sounds[1].Model != "ac97":
						return fmt.Errorf("sound: %+v", d.Sounds)
					case inputsOf(d) != "keyboard/ps2 keyboard/virtio mouse/ps2 tablet/usb":
						return fmt.Errorf("inputs: %s", inputsOf(d))
					}
					return nil
				}),
				// Nothing libvirt fills in enters state (v3: nothing inside a group is computed).
				ConfigStateChecks: acctest.State(domRes, "devices.video.0.vram_kib", nil, "devices.video.1.heads", nil,
					"devices.rng.0.backend", nil, "devices.rng.0.model", nil, "devices.rng.1.backend", "/dev/random",
					"devices.vsock.cid", nil, "devices.input", knownvalue.SetSizeExact(3), "devices.sound", knownvalue.ListSizeExact(2),
					"devices.serial", nil, "devices.tpm", nil),
			},
			{Config: guestDevicesConfig(name, everyGuestDevice), ConfigPlanChecks: acctest.Plans(acctest.NoChange())},
			{
				Config:           guestDevicesConfig(name, changedGuestDevices),
				ConfigPlanChecks: acctest.Updates(domRes, "definition"),
				Check: guestDevices(t, name, func(d *libvirtxml.DomainDeviceList) error {
					switch {
					case len(d.Videos) != 1 || d.Videos[0].Model.Type != "qxl":
						return fmt.Errorf("video: %+v", d.Videos)
					case len(d.RNGs)+len(d.Sounds) != 0:
						return fmt.Errorf("rng and sound were not removed: %+v %+v", d.RNGs, d.Sounds)
					case d.VSock == nil || d.VSock.CID == nil || d.VSock.CID.Address != "42":
						return fmt.Errorf("vsock: %+v", d.VSock)
					case len(d.Watchdogs) != 1 || d.Watchdogs[0].Model != "ib700" || d.Watchdogs[0].Action != "reset":
						return fmt.Errorf("watchdog: %+v", d.Watchdogs)
					case d.MemBalloon == nil || d.MemBalloon.Model != "virtio" || d.MemBalloon.Stats != nil:
						return fmt.Errorf("memballoon: %+v", d.MemBalloon)
					case inputsOf(d) != "keyboard/ps2 mouse/ps2":
						return fmt.Errorf("inputs: %s", inputsOf(d))
					}
					return nil
				}),
				ConfigStateChecks: acctest.State(domRes, "devices.watchdog.0.action", nil, "devices.video.0.vram_kib", nil,
					"devices.video.0.heads", nil, "devices.rng", nil),
			},
			{
				// The import writes the group: what differs from what the provider would
				// create without it. It leaves out the plain virtio memballoon the
				// configuration names (libvirt adds that one by itself: the import rule).
				ResourceName: domRes, ImportState: true, ImportStateVerify: true, ImportStateId: name,
				// update_method: this state's is the last update's, an import's none.
				ImportStateVerifyIgnore: []string{"timeouts", "update_method", "devices.memballoon"},
			},
			{Config: guestDevicesConfig(name, changedGuestDevices), ConfigPlanChecks: acctest.Plans(acctest.NoChange())},
			{
				// Dropping them all takes away what the provider wrote; libvirt puts its
				// default memballoon back. The group is null in state.
				Config:            guestDevicesConfig(name, ""),
				ConfigPlanChecks:  acctest.Updates(domRes, "definition"),
				ConfigStateChecks: acctest.State(domRes, "devices", nil),
				Check: guestDevices(t, name, func(d *libvirtxml.DomainDeviceList) error {
					if len(d.Videos)+len(d.Watchdogs)+len(d.Panics) != 0 || d.VSock != nil || d.MemBalloon == nil || d.MemBalloon.Model != "virtio" {
						return fmt.Errorf("devices left: video %+v watchdog %+v panic %+v vsock %+v memballoon %+v", d.Videos, d.Watchdogs, d.Panics, d.VSock, d.MemBalloon)
					}
					return nil
				}),
			},
			{Config: guestDevicesConfig(name, ""), ConfigPlanChecks: acctest.Plans(acctest.NoChange())},
		},
	})
}

// A domain defined by virsh with guest devices (and libvirt's own default devices)
// imports with a generated configuration that plans clean and names the devices, but not
// libvirt's own memballoon and ps2 inputs.
func TestAccDomain_guestDevicesImport(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("guestdev")
	defineVNCDomain(t, name, `    <video><model type='vga' vram='32768'/></video>
    <video><model type='qxl' vgamem='32768'/></video>
    <rng model='virtio'><backend model='random'>/dev/random</backend></rng>
    <watchdog model='i6300esb'/>
    <panic model='isa'/>
    <vsock model='virtio'><cid auto='no' address='7'/></vsock>
    <sound model='ac97'/>
    <sound model='ich6'/>
    <input type='tablet' bus='usb'/>`)
	raw := generateConfigPlansClean(t, "libvirt_domain.imported", name)
	generated := strings.Join(strings.Fields(raw), " ")
	// The qxl card's vgamem is nothing devices.video says: the card goes whole into
	// device_xml (#25) rather than typed without it.
	for _, want := range []string{`devices = {`, `model = "vga"`, `vram_kib = 32768`, `<video><model type=\"qxl\"`, `vgamem=\"32768\"`, `backend = "/dev/random"`,
		`model = "i6300esb"`, `cid = 7`, `model = "ac97"`, `model = "ich6"`, `type = "tablet"`} {
		if !strings.Contains(generated, want) {
			t.Errorf("generated.tf lacks %s:\n%s", want, generated)
		}
	}
	// libvirt's defaults: its own balloon and ps2 inputs, a watchdog's reset action, the
	// qxl card's video memory, an rng's model.
	for _, unwanted := range []string{"memballoon = {", `bus = "ps2"`, `action = "reset"`, `vram_kib = 65536`, `model = "virtio"`} {
		if strings.Contains(generated, unwanted) {
			t.Errorf("generated.tf has libvirt's own default %s:\n%s", unwanted, generated)
		}
	}
	// Owned by that configuration, a description change keeps what the schema does not
	// type of a video card (the qxl's vgamem, #25).
	w := newCLIWork(t, acctest.ProviderBlock("")+fmt.Sprintf("import {\n  to = libvirt_domain.imported\n  id = %q\n}\n", name)+raw)
	w.mustRun("apply", "-auto-approve", "-input=false")
	w.write("main.tf", acctest.ProviderBlock("")+describe(raw))
	if out, code := w.run("apply", "-auto-approve", "-input=false"); code != 0 || !strings.Contains(out, "0 added, 1 changed, 0 destroyed") {
		t.Fatalf("description change (exit %d):\n%s", code, out)
	}
	d, err := acctest.InspectDomain(t, name)
	if err != nil {
		t.Fatal(err)
	}
	if v := d.Inactive.Devices.Videos; len(v) != 2 || v[1].Model.Type != "qxl" || v[1].Model.VGAMem != 32768 {
		t.Errorf("after a description change, videos %+v: want the qxl's vgamem 32768 kept", v)
	}
	w.mustRun("state", "rm", "libvirt_domain.imported")
}

// QEMU starts a domain with every guest device but vsock (this host has no
// /dev/vhost-vsock): the running domain plans clean, and a change restarts it. The
// domain has no disk (SeaBIOS waits forever), so its shutdown is forced after 2 s.
func TestAccDomainGuestDevices_started(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("guestdev")
	config := func(action string) string {
		return acctest.ProviderBlock("") + fmt.Sprintf(`
resource "libvirt_domain" "test" {
  name       = %q
  type       = "qemu"
  vcpu       = 1
  memory_mib = 64
  qemu_agent = false
  shutdown   = { timeout = "2s" }
  devices = {
    video      = [{ model = "virtio", heads = 2, accel3d = false }]
    rng        = [{ rate_bytes = 1024, rate_period_ms = 1000 }]
    watchdog   = [{ model = "i6300esb", action = %q }]
    panic      = { model = "isa" }
    memballoon = { model = "virtio", stats_period_sec = 10, autodeflate = true, free_page_reporting = true }
    sound      = [{ model = "ich9" }]
    input      = [{ type = "tablet", bus = "usb" }]
  }
}
`, name, action)
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{Config: config("poweroff"), ConfigPlanChecks: acctest.Plans(), ConfigStateChecks: acctest.State(domRes, "running", true)},
			{Config: config("poweroff"), ConfigPlanChecks: acctest.Plans(acctest.NoChange())},
			{
				Config:           config("pause"),
				ConfigPlanChecks: acctest.Updates(domRes, "restart"),
				Check: acctest.HostCheck(func() error {
					d, err := acctest.InspectDomain(t, name)
					if err != nil {
						return err
					}
					if !d.Active || len(d.Live.Devices.Watchdogs) != 1 || d.Live.Devices.Watchdogs[0].Action != "pause" {
						return fmt.Errorf("after the restart: active %v, watchdogs %+v", d.Active, d.Live.Devices.Watchdogs)
					}
					return nil
				}),
			},
		},
	})
}

// A virsh-defined domain with a graphical console has libvirt's own video card,
// memballoon and ps2 inputs: imported into a configuration that names no guest device,
// it only imports, and plans clean (the v3 rule: libvirt's defaults are no devices group).
func TestAccDomain_guestDevicesAdoptDefaults(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("guestdev")
	defineVNCDomain(t, name, "")
	w := newCLIWork(t, acctest.ProviderBlock("")+fmt.Sprintf(`
import {
  to = libvirt_domain.adopted
  id = %[1]q
}

resource "libvirt_domain" "adopted" {
  name       = %[1]q
  type       = "qemu"
  vcpu       = 1
  memory_mib = 64
  running    = false
  qemu_agent = false
  devices    = { serial = [] } # virsh gave it none; the provider's default is a pty serial port
}
`, name))
	if out, code := w.run("apply", "-auto-approve", "-input=false"); code != 0 || !strings.Contains(out, "1 imported, 0 added, 0 changed, 0 destroyed") {
		t.Fatalf("import (exit %d):\n%s", code, out)
	}
	if out, code := w.run("plan", "-input=false", "-detailed-exitcode"); code != 0 {
		t.Fatalf("plan after the import is not empty (exit %d):\n%s", code, out)
	}
	w.run("state", "rm", "libvirt_domain.adopted")
}

// defineVNCDomain defines name as virsh would, a stopped 64 MiB domain with a VNC
// console and devices (XML), removed at the test's end.
func defineVNCDomain(t *testing.T, name, devices string) {
	t.Helper()
	acctest.DefineDomain(t, fmt.Sprintf(`<domain type='qemu'>
  <name>%s</name>
  <memory unit='MiB'>64</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64'>hvm</type></os>
  <features><acpi/><apic/></features>
  <devices>
    <graphics type='vnc' port='-1' autoport='yes' listen='127.0.0.1'/>
%s
  </devices>
</domain>`, name, devices))
	acctest.RemoveDomainAtEnd(t, name)
}

// devices.tpm, define-only: `tpm = {}` is the default TPM (tpm-crb, swtpm, 2.0,
// persistent state) and every value stays null in state; values that differ show as
// written (TPM 1.2 among them), and an import writes them (only them); removing it
// removes the device.
func TestAccDomainDevices_tpmDefineOnly(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("devtpm")
	tpm := func(want string) resource.TestCheckFunc {
		return guestDevices(t, name, func(d *libvirtxml.DomainDeviceList) error {
			var got []string
			for _, x := range d.TPMs {
				got = append(got, x.Model)
				if e := x.Backend.Emulator; e != nil {
					got = append(got, "emulator", e.Version, "persistent="+e.PersistentState)
				}
			}
			if strings.Join(got, " ") != want {
				return fmt.Errorf("tpm of %s: %v, want %s", name, got, want)
			}
			return nil
		})
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{
				Config:           guestDevicesConfig(name, `devices = { tpm = {} }`),
				ConfigPlanChecks: acctest.Plans(),
				ConfigStateChecks: acctest.State(domRes, "devices.tpm.model", nil, "devices.tpm.backend", nil, "devices.tpm.version", nil,
					"devices.tpm.persistent_state", nil, "devices.video", nil),
				Check: tpm("tpm-crb emulator 2.0 persistent=yes"),
			},
			{Config: guestDevicesConfig(name, `devices = { tpm = {} }`), ConfigPlanChecks: acctest.Plans(acctest.NoChange())},
			{
				Config:            guestDevicesConfig(name, `devices = { tpm = { model = "tpm-tis", persistent_state = false } }`),
				ConfigPlanChecks:  acctest.Updates(domRes, "definition"),
				ConfigStateChecks: acctest.State(domRes, "devices.tpm.model", "tpm-tis", "devices.tpm.persistent_state", false, "devices.tpm.backend", nil),
				Check:             tpm("tpm-tis emulator 2.0 persistent="),
			},
			{
				// TPM 1.2 (TIS only): libvirt defines it; the import writes the version.
				Config:            guestDevicesConfig(name, `devices = { tpm = { model = "tpm-tis", version = "1.2", persistent_state = false } }`),
				ConfigPlanChecks:  acctest.Updates(domRes, "definition"),
				ConfigStateChecks: acctest.State(domRes, "devices.tpm.version", "1.2"),
				Check:             tpm("tpm-tis emulator 1.2 persistent="),
			},
			{
				// update_method: this state's is the last update's, an import's none.
				ResourceName: domRes, ImportState: true, ImportStateVerify: true, ImportStateId: name,
				ImportStateVerifyIgnore: []string{"timeouts", "update_method"},
			},
			{
				Config:            guestDevicesConfig(name, ""),
				ConfigPlanChecks:  acctest.Updates(domRes, "definition"),
				ConfigStateChecks: acctest.State(domRes, "devices", nil),
				Check:             tpm(""),
			},
		},
	})
}
