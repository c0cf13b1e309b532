package provider_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// Issue #25 for the character devices and the hypervisor features: a domain without any
// serial port (and a <features> with pmu, which the features attribute does not type),
// and a domain with a serial port the serial blocks cannot say (a file appended to)
// beside a typed one, a virtio console and virt-install's <vmport state='off'/>.
// Imported with -generate-config-out (serial = [] for the first, its <features> whole in
// extra_xml; for the second the appending serial in device_xml, vmport = "off" a
// member), they plan clean; a description change keeps everything; destroyed and
// recreated from the generated configuration, the first has still no serial port nor
// console and its features, the second both serial ports, its console and vmport. A
// third's telnet serial port 0 (device_xml too) keeps the console libvirt mirrors it in.
func TestAccDomainAdopt_chardevsAndFeatures(t *testing.T) {
	acctest.RequireAcc(t)
	bare, two, tel := acctest.RandomName("adoptnoser"), acctest.RandomName("adoptser"), acctest.RandomName("adopttel")
	acctest.DefineDomain(t, fmt.Sprintf(`<domain type='qemu'>
  <name>%s</name>
  <memory unit='MiB'>128</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
  <features><acpi/><apic/><vmport state='off'/><pmu state='off'/></features>
  <devices/>
</domain>`, bare))
	acctest.RemoveDomainAtEnd(t, bare)
	acctest.DefineDomain(t, fmt.Sprintf(`<domain type='qemu'>
  <name>%s</name>
  <memory unit='MiB'>128</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
  <features><acpi/><apic/><vmport state='off'/></features>
  <devices>
    <serial type='pty'><target port='0'/></serial>
    <serial type='file'><source path='/tmp/%s-ttyS1.log' append='on'/><target port='1'/></serial>
    <console type='pty'><target type='virtio'/></console>
  </devices>
</domain>`, two, two))
	acctest.RemoveDomainAtEnd(t, two)
	acctest.DefineDomain(t, fmt.Sprintf(`<domain type='qemu'>
  <name>%s</name>
  <memory unit='MiB'>128</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
  <devices>
    <serial type='tcp'><source mode='bind' host='127.0.0.1' service='4567'/><protocol type='telnet'/><target port='0'/></serial>
  </devices>
</domain>`, tel))
	acctest.RemoveDomainAtEnd(t, tel)
	shape := func(name string) string {
		t.Helper()
		live, err := acctest.InspectDomain(t, name)
		if err != nil {
			t.Fatal(err)
		}
		d := live.Inactive
		var out []string
		for _, s := range d.Devices.Serials {
			x := "serial"
			if s.Source != nil && s.Source.File != nil {
				x += ":file:" + s.Source.File.Append
			}
			if s.Protocol != nil {
				x += ":" + s.Protocol.Type
			}
			out = append(out, x)
		}
		for _, c := range d.Devices.Consoles {
			out = append(out, "console:"+c.Target.Type)
		}
		if f := d.Features; f != nil {
			if f.VMPort != nil {
				out = append(out, "vmport:"+f.VMPort.State)
			}
			if f.PMU != nil {
				out = append(out, "pmu:"+f.PMU.State)
			}
		}
		return strings.Join(out, " ")
	}
	beforeBare, beforeTwo, beforeTel := shape(bare), shape(two), shape(tel)
	if beforeBare != "vmport:off pmu:off" || beforeTwo != "serial serial:file:on console:serial console:virtio vmport:off" ||
		beforeTel != "serial:telnet console:serial" {
		t.Fatalf("defined: %q, %q, %q", beforeBare, beforeTwo, beforeTel)
	}

	generated := generateConfigPlansCleanAll(t, map[string]string{"libvirt_domain.bare": bare, "libvirt_domain.two": two, "libvirt_domain.tel": tel})
	// Terraform writes the empty list over two lines (serial = [ and ]).
	if !regexp.MustCompile(`serial\s*=\s*\[\s*\]`).MatchString(generated) {
		t.Errorf("the generated configuration has no serial = []:\n%s", generated)
	}
	if !regexp.MustCompile(`vmport\s*=\s*"off"`).MatchString(generated) { // the second's, a member
		t.Errorf("the generated configuration has no vmport = \"off\":\n%s", generated)
	}
	for _, want := range []string{`<vmport state='off'/>`, `<serial type=\"file\">`, `append=\"on\"`} {
		if !strings.Contains(generated, want) {
			t.Errorf("the generated configuration has no %s:\n%s", want, generated)
		}
	}

	imports := ""
	for to, id := range map[string]string{"bare": bare, "two": two, "tel": tel} {
		imports += fmt.Sprintf("import {\n  to = libvirt_domain.%s\n  id = %q\n}\n", to, id)
	}
	w := newCLIWork(t, acctest.ProviderBlock("")+imports+generated)
	w.mustRun("apply", "-auto-approve", "-input=false")
	w.write("main.tf", acctest.ProviderBlock("")+describe(generated))
	if out, code := w.run("apply", "-auto-approve", "-input=false"); code != 0 || !strings.Contains(out, "0 added, 3 changed, 0 destroyed") { // describe sets every one
		t.Fatalf("description change (exit %d):\n%s", code, out)
	}
	if out, code := w.run("plan", "-input=false", "-detailed-exitcode"); code != 0 {
		t.Fatalf("the plan after the description change is not empty (exit %d):\n%s", code, out)
	}
	if b, s, x := shape(bare), shape(two), shape(tel); b != beforeBare || s != beforeTwo || x != beforeTel {
		t.Fatalf("a description change: %q, %q, %q; was %q, %q, %q", b, s, x, beforeBare, beforeTwo, beforeTel)
	}

	w.mustRun("destroy", "-auto-approve", "-input=false")
	w.write("main.tf", acctest.ProviderBlock("")+generated)
	if out, code := w.run("apply", "-auto-approve", "-input=false"); code != 0 || !strings.Contains(out, "3 added, 0 changed, 0 destroyed") {
		t.Fatalf("apply of the generated configuration on a clean host (exit %d):\n%s", code, out)
	}
	if out, code := w.run("plan", "-input=false", "-detailed-exitcode"); code != 0 {
		t.Fatalf("the plan after recreating is not empty (exit %d):\n%s", code, out)
	}
	if b, s, x := shape(bare), shape(two), shape(tel); b != beforeBare || s != beforeTwo || x != beforeTel {
		t.Fatalf("recreated: %q, %q, %q; was %q, %q, %q", b, s, x, beforeBare, beforeTwo, beforeTel)
	}
	w.mustRun("destroy", "-auto-approve", "-input=false")
}
