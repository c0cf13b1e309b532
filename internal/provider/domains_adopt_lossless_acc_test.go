package provider_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// Issue #25, "adopt anything, lose nothing": a domain as virt-install and a hand editor
// make it, with NICs of every type the network_interface blocks do not type (user,
// ethernet, mcast, udp, server, client), a <shmem> no block has, an evdev input passed
// through, a sound card with codecs, a 9p share with a write policy, a VNC console on a
// unix socket with a share policy, and virt-install's
// libosinfo metadata (its namespace declared on <domain>, which libvirt prints on
// <metadata>). Imported with -generate-config-out (the NICs, the shmem and the evdev
// input go into device_xml, the network NIC into a block), it plans clean; one harmless
// change (description) keeps every device, the codecs, the write policy, the console's
// socket and share policy, and the metadata; destroyed, the generated configuration applied on the clean host recreates
// every NIC with its MAC, the shmem and the input.
func TestAccDomainAdopt_untypedDevicesAndMetadata(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("adoptnic")
	acctest.DefineDomain(t, fmt.Sprintf(`<domain type='qemu' xmlns:libosinfo='http://libosinfo.org/xmlns/libvirt/domain/1.0'>
  <name>%s</name>
  <metadata>
    <libosinfo:libosinfo><libosinfo:os id='http://debian.org/debian/12'/></libosinfo:libosinfo>
  </metadata>
  <memory unit='MiB'>128</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
  <devices>
    <interface type='network'><mac address='52:54:00:25:00:01'/><source network='default'/><model type='virtio'/></interface>
    <interface type='user'><mac address='52:54:00:25:00:02'/><model type='virtio'/></interface>
    <interface type='ethernet'><mac address='52:54:00:25:00:03'/><target dev='tfacc25tap' managed='no'/><model type='virtio'/></interface>
    <interface type='mcast'><mac address='52:54:00:25:00:04'/><source address='230.0.0.1' port='5558'/><model type='rtl8139'/></interface>
    <interface type='udp'><mac address='52:54:00:25:00:05'/><source address='192.168.10.1' port='11115'><local address='127.0.0.1' port='11116'/></source><model type='virtio'/></interface>
    <interface type='server'><mac address='52:54:00:25:00:06'/><source address='127.0.0.1' port='5558'/><model type='e1000'/></interface>
    <interface type='client'><mac address='52:54:00:25:00:07'/><source address='192.168.0.1' port='5558'/><model type='e1000'/></interface>
    <shmem name='tfacc25'><model type='ivshmem-plain'/><size unit='M'>4</size></shmem>
    <input type='evdev'><source dev='/dev/input/event2' grab='all' grabToggle='ctrl-ctrl' repeat='on'/></input>
    <sound model='ich6'><codec type='micro'/><codec type='duplex'/></sound>
    <filesystem type='mount' accessmode='mapped'><driver type='path' wrpolicy='immediate'/><source dir='/tmp/tfacc25share'/><target dir='tfacc25'/></filesystem>
    <graphics type='vnc' sharePolicy='force-shared'><listen type='socket' socket='/tmp/tfacc25-vnc.sock'/></graphics>
  </devices>
</domain>`, name))
	acctest.RemoveDomainAtEnd(t, name)
	before := adoptedShape(t, name)
	if !before.libosinfo {
		t.Fatalf("the defined domain has no libosinfo metadata:\n%s", before.xml)
	}

	generated := generateConfigPlansClean(t, "libvirt_domain.adopted", name)
	for _, want := range []string{`network_interface`, `type=\"user\"`, `type=\"ethernet\"`, `type=\"mcast\"`, `type=\"udp\"`,
		`type=\"server\"`, `type=\"client\"`, `<shmem`, `52:54:00:25:00:07`, `<input type=\"evdev\"`} {
		if !strings.Contains(generated, want) {
			t.Errorf("the generated configuration has no %s:\n%s", want, generated)
		}
	}
	if strings.Contains(generated, "<address") {
		t.Errorf("the generated configuration keeps libvirt's addresses:\n%s", generated)
	}

	// Owned by the generated configuration, one harmless change: nothing else moves.
	w := newCLIWork(t, acctest.ProviderBlock("")+fmt.Sprintf("import {\n  to = libvirt_domain.adopted\n  id = %q\n}\n", name)+generated)
	w.mustRun("apply", "-auto-approve", "-input=false")
	described := describe(generated)
	w.write("main.tf", acctest.ProviderBlock("")+described)
	if out, code := w.run("apply", "-auto-approve", "-input=false"); code != 0 || !strings.Contains(out, "0 added, 1 changed, 0 destroyed") {
		t.Fatalf("description change (exit %d):\n%s", code, out)
	}
	if out, code := w.run("plan", "-input=false", "-detailed-exitcode"); code != 0 {
		t.Fatalf("the plan after the description change is not empty (exit %d):\n%s", code, out)
	}
	after := adoptedShape(t, name)
	if after.nics != before.nics || after.shmems != before.shmems || after.inputs != before.inputs || !after.libosinfo ||
		after.codecs != 2 || after.wrpolicy != "immediate" || after.vnc != before.vnc {
		t.Fatalf("a description change lost something:\nbefore %s\nafter  %s\n%s", before, after, after.xml)
	}

	// Destroyed, then recreated from the generated configuration on the clean host.
	w.mustRun("destroy", "-auto-approve", "-input=false")
	if _, err := acctest.InspectDomain(t, name); err == nil {
		t.Fatalf("domain %s is still defined after destroy", name)
	}
	w.write("main.tf", acctest.ProviderBlock("")+generated)
	if out, code := w.run("apply", "-auto-approve", "-input=false"); code != 0 || !strings.Contains(out, "1 added, 0 changed, 0 destroyed") {
		t.Fatalf("apply of the generated configuration on a clean host (exit %d):\n%s", code, out)
	}
	if out, code := w.run("plan", "-input=false", "-detailed-exitcode"); code != 0 {
		t.Fatalf("the plan after recreating is not empty (exit %d):\n%s", code, out)
	}
	if again := adoptedShape(t, name); again.nics != before.nics || again.shmems != before.shmems || again.inputs != before.inputs {
		t.Fatalf("recreated from the generated configuration:\nbefore %s\nagain  %s\n%s", before, again, again.xml)
	}
	w.mustRun("destroy", "-auto-approve", "-input=false")
	if _, err := acctest.InspectDomain(t, name); err == nil {
		t.Fatalf("domain %s is still defined after the last destroy", name)
	}
}

// describe is a generated configuration with description = "adopted": the line it
// has replaced (Terraform writes null for a domain without one, OpenTofu ""), else one
// added after the resource's first line.
func describe(generated string) string {
	if re := regexp.MustCompile(`(?m)^(\s*description\s*=\s*)(null|"")\s*$`); re.MatchString(generated) {
		return re.ReplaceAllString(generated, `${1}"adopted"`)
	}
	first := regexp.MustCompile(`(?m)^resource "libvirt_domain" "[a-z_]+" \{$`).FindStringIndex(generated)
	if first == nil {
		return generated
	}
	return generated[:first[1]] + "\n  description = \"adopted\"" + generated[first[1]:]
}

// adoptShape is what TestAccDomainAdopt_untypedDevicesAndMetadata compares: each NIC
// as type/MAC/model in order, the shmems, and whether libvirt still has the libosinfo
// entry in its namespace.
type adoptShape struct {
	nics, shmems, inputs, wrpolicy, vnc string
	codecs                              int
	libosinfo                           bool
	xml                                 string
}

func (s adoptShape) String() string {
	return fmt.Sprintf("NICs [%s], shmems [%s], inputs [%s], sound codecs %d, 9p wrpolicy %q, VNC %s, libosinfo %v",
		s.nics, s.shmems, s.inputs, s.codecs, s.wrpolicy, s.vnc, s.libosinfo)
}

func adoptedShape(t *testing.T, name string) adoptShape {
	t.Helper()
	live, err := acctest.InspectDomain(t, name)
	if err != nil {
		t.Fatal(err)
	}
	var nics, shmems []string
	for _, x := range live.Inactive.Devices.Interfaces {
		nics = append(nics, nicType(x)+"/"+x.MAC.Address+"/"+x.Model.Type)
	}
	for _, s := range live.Inactive.Devices.Shmems {
		shmems = append(shmems, s.Name)
	}
	var inputs []string
	for _, in := range live.Inactive.Devices.Inputs {
		if in.Source != nil && in.Source.EVDev != nil {
			inputs = append(inputs, in.Type+":"+in.Source.EVDev.Dev)
		}
	}
	codecs, wrpolicy, vnc := 0, "", ""
	for _, g := range live.Inactive.Devices.Graphics {
		if g.VNC != nil {
			vnc = "share=" + g.VNC.SharePolicy
			for _, l := range g.VNC.Listeners {
				if l.Socket != nil {
					vnc += " socket=" + l.Socket.Socket
				}
			}
		}
	}
	for _, s := range live.Inactive.Devices.Sounds {
		codecs += len(s.Codec)
	}
	for _, f := range live.Inactive.Devices.Filesystems {
		if f.Driver != nil {
			wrpolicy = f.Driver.WRPolicy
		}
	}
	return adoptShape{nics: strings.Join(nics, " "), shmems: strings.Join(shmems, " "), inputs: strings.Join(inputs, " "),
		codecs: codecs, wrpolicy: wrpolicy, vnc: vnc, xml: live.InactiveXML,
		libosinfo: regexp.MustCompile(`xmlns:libosinfo="http://libosinfo.org/xmlns/libvirt/domain/1.0"`).MatchString(live.InactiveXML) &&
			strings.Contains(live.InactiveXML, `libosinfo:os id="http://debian.org/debian/12"`)}
}

func nicType(x libvirtxml.DomainInterface) string {
	s := x.Source
	switch {
	case s == nil:
		return "?"
	case s.Network != nil:
		return "network"
	case s.User != nil:
		return "user"
	case s.Ethernet != nil:
		return "ethernet"
	case s.MCast != nil:
		return "mcast"
	case s.UDP != nil:
		return "udp"
	case s.Server != nil:
		return "server"
	case s.Client != nil:
		return "client"
	}
	return "other"
}

// adoptUpdatesAndRecreates is the rest of an adoption test after the generated
// configuration planned clean: owned by it, one description change keeps what shape
// reads of the domain, and the plan after it is empty; destroyed, the generated
// configuration applied on the clean host gives the same shape and an empty plan; then
// destroyed again.
func adoptUpdatesAndRecreates(t *testing.T, name, generated string, shape func() []string) {
	t.Helper()
	before := shape()
	w := newCLIWork(t, acctest.ProviderBlock("")+fmt.Sprintf("import {\n  to = libvirt_domain.adopted\n  id = %q\n}\n", name)+generated)
	w.mustRun("apply", "-auto-approve", "-input=false")
	w.write("main.tf", acctest.ProviderBlock("")+describe(generated))
	if out, code := w.run("apply", "-auto-approve", "-input=false"); code != 0 || !strings.Contains(out, "0 added, 1 changed, 0 destroyed") {
		t.Fatalf("description change (exit %d):\n%s", code, out)
	}
	if out, code := w.run("plan", "-input=false", "-detailed-exitcode"); code != 0 {
		t.Fatalf("the plan after the description change is not empty (exit %d):\n%s", code, out)
	}
	if after := shape(); !slices.Equal(after, before) {
		t.Fatalf("a description change changed the domain:\nbefore %q\nafter  %q", before, after)
	}
	w.mustRun("destroy", "-auto-approve", "-input=false")
	if _, err := acctest.InspectDomain(t, name); err == nil {
		t.Fatalf("domain %s is still defined after destroy", name)
	}
	w.write("main.tf", acctest.ProviderBlock("")+generated)
	if out, code := w.run("apply", "-auto-approve", "-input=false"); code != 0 || !strings.Contains(out, "1 added, 0 changed, 0 destroyed") {
		t.Fatalf("apply of the generated configuration on a clean host (exit %d):\n%s", code, out)
	}
	if out, code := w.run("plan", "-input=false", "-detailed-exitcode"); code != 0 {
		t.Fatalf("the plan after recreating is not empty (exit %d):\n%s", code, out)
	}
	if again := shape(); !slices.Equal(again, before) {
		t.Fatalf("recreated from the generated configuration:\nbefore %q\nagain  %q", before, again)
	}
	w.mustRun("destroy", "-auto-approve", "-input=false")
}
