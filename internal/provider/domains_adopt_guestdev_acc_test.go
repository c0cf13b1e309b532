package provider_test

import (
	"encoding/xml"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// Issue #25 for the consoles, the guest devices and the TPM: a domain with a SPICE
// console listening where libvirt's configuration says (<listen type='address'/>), a
// second VNC console with a share policy and no listener, a vmvga card, a sound card with
// a codec and an audio link, a file audio backend, a usb tablet and a virtio keyboard
// with a driver, an egd rng beside a plain one, an isa panic, a TPM with chosen PCR
// banks and a memballoon with a driver. Imported with -generate-config-out (the typed
// forms into graphics / devices, listen = "libvirt-default", the rest into device_xml), it plans clean;
// a description change keeps each of these devices as it was (no listen address or port
// added); destroyed, the generated configuration recreates them all.
func TestAccDomainAdopt_guestDevices(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("adoptgd")
	acctest.DefineDomain(t, fmt.Sprintf(`<domain type='qemu'>
  <name>%s</name>
  <memory unit='MiB'>128</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
  <devices>
    <graphics type='spice' autoport='yes'><listen type='address'/></graphics>
    <graphics type='vnc' sharePolicy='force-shared'><listen type='none'/></graphics>
    <video><model type='vmvga' vram='16384' heads='1' primary='yes'/></video>
    <sound model='ich9'><codec type='output'/><audio id='1'/></sound>
    <audio id='1' type='file' path='/tmp/%s.wav'/>
    <input type='tablet' bus='usb'/>
    <input type='keyboard' bus='virtio'><driver iommu='on'/></input>
    <rng model='virtio'><backend model='random'>/dev/urandom</backend></rng>
    <rng model='virtio'><backend model='egd' type='udp'><source mode='bind' service='1234'/><source mode='connect' host='1.2.3.4' service='1234'/></backend></rng>
    <panic model='isa'/>
    <tpm model='tpm-crb'><backend type='emulator' version='2.0'><active_pcr_banks><sha256/></active_pcr_banks></backend></tpm>
    <memballoon model='virtio'><driver packed='on'/></memballoon>
  </devices>
</domain>`, name, name))
	acctest.RemoveDomainAtEnd(t, name)
	before := guestDeviceShape(t, name)
	// 2 consoles, 1 video, 1 sound, 1 audio, 4 inputs (libvirt's ps2 mouse and keyboard
	// too), 2 rngs, 1 panic, 1 TPM, 1 memballoon.
	if len(before) != 14 {
		t.Fatalf("the defined domain has %d of these devices, want 14: %q", len(before), before)
	}

	generated := generateConfigPlansClean(t, "libvirt_domain.adopted", name)
	for _, want := range []string{`listen    = "libvirt-default"`, `"vmvga"`, `sharePolicy=\"force-shared\"`, `<codec type=\"output\"`, `<audio id=\"1\" type=\"file\"`,
		`<input type=\"keyboard\" bus=\"virtio\"`, `<backend model=\"egd\"`, `<active_pcr_banks>`, `<memballoon model=\"virtio\"`} {
		if !strings.Contains(generated, want) {
			t.Errorf("the generated configuration has no %s:\n%s", want, generated)
		}
	}

	adoptUpdatesAndRecreates(t, name, generated, func() []string { return guestDeviceShape(t, name) })
}

// guestDeviceShape is the domain's consoles, video, sound and audio, inputs, rngs, panics,
// TPMs and memballoon as libvirt prints them without what libvirt assigns (addresses,
// aliases), sorted.
func guestDeviceShape(t *testing.T, name string) []string {
	t.Helper()
	live, err := acctest.InspectDomain(t, name)
	if err != nil {
		t.Fatal(err)
	}
	d := live.Inactive.Devices
	var devs []any
	for _, x := range d.Graphics {
		devs = append(devs, &x)
	}
	for _, x := range d.Videos {
		devs = append(devs, &x)
	}
	for _, x := range d.Sounds {
		devs = append(devs, &x)
	}
	for _, x := range d.Audios {
		devs = append(devs, &x)
	}
	for _, x := range d.Inputs {
		devs = append(devs, &x)
	}
	for _, x := range d.RNGs {
		devs = append(devs, &x)
	}
	for _, x := range d.Panics {
		devs = append(devs, &x)
	}
	for _, x := range d.TPMs {
		devs = append(devs, &x)
	}
	if d.MemBalloon != nil {
		devs = append(devs, d.MemBalloon)
	}
	var out []string
	for _, x := range devs {
		b, err := xml.Marshal(x)
		if err != nil {
			t.Fatal(err)
		}
		text := regexp.MustCompile(`<(address|alias)\b[^>]*>(</(address|alias)>)?`).ReplaceAllString(string(b), "")
		out = append(out, text)
	}
	slices.Sort(out)
	return out
}
