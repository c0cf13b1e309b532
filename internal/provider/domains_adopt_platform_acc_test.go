package provider_test

import (
	"encoding/xml"
	"fmt"
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// Issue #25 for the platform families: two domains as a hand editor and virt-install
// write them, with what the typed schema cannot say about the platform:
//   - uefi: firmware chosen by hand (a pflash loader with its nvram path and template),
//     virt-install's libosinfo metadata (namespace declared on <domain>) and another
//     application's element, <qemu:capabilities>, a fw_cfg entry read from a host file,
//     and <vcpu cpuset>;
//   - bios: <os><bios useserial rebootTimeout> and <bootmenu enable='no'> beside typed
//     SMBIOS strings, a <cpu> with NUMA distances and a cell's
//     discard (escaped whole into extra_xml), <vcpus> hot-plug states, numbered
//     <iothreadids>, a memory backing with an <allocation>, and <vcpu placement='auto'>
//     with <numatune> placement auto.
//
// Imported with -generate-config-out they plan clean; one harmless change (description)
// keeps every platform part; destroyed, the generated configuration recreates each part
// exactly as libvirt had it.
func TestAccDomainAdopt_platformLossless(t *testing.T) {
	acctest.RequireAcc(t)
	uefi, bios := acctest.RandomName("adoptfw"), acctest.RandomName("adoptcpu")
	acctest.DefineDomain(t, fmt.Sprintf(`<domain type='qemu' xmlns:libosinfo='http://libosinfo.org/xmlns/libvirt/domain/1.0'
    xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>
  <name>%[1]s</name>
  <metadata>
    <libosinfo:libosinfo><libosinfo:os id='http://debian.org/debian/12'/></libosinfo:libosinfo>
    <inv:record xmlns:inv='https://example.org/inventory/1'><inv:owner>team-a</inv:owner></inv:record>
  </metadata>
  <memory unit='MiB'>256</memory>
  <vcpu cpuset='0'>1</vcpu>
  <sysinfo type='fwcfg'>
    <entry name='opt/com.example/value'>v</entry>
    <entry name='opt/com.example/file' file='/var/lib/libvirt/%[1]s.cfg'/>
  </sysinfo>
  <os>
    <type arch='x86_64' machine='q35'>hvm</type>
    <loader readonly='yes' type='pflash'>/usr/share/OVMF/OVMF_CODE_4M.fd</loader>
    <nvram template='/usr/share/OVMF/OVMF_VARS_4M.fd'>/var/lib/libvirt/qemu/nvram/%[1]s_VARS.fd</nvram>
    <boot dev='hd'/>
  </os>
  <features><acpi/></features>
  <devices/>
  <qemu:capabilities><qemu:del capability='drive'/></qemu:capabilities>
</domain>`, uefi))
	acctest.RemoveDomainAtEnd(t, uefi)
	acctest.DefineDomain(t, fmt.Sprintf(`<domain type='qemu'>
  <name>%s</name>
  <memory unit='KiB'>262144</memory>
  <vcpu placement='auto' current='2'>4</vcpu>
  <vcpus>
    <vcpu id='0' enabled='yes' hotpluggable='no' order='1'/>
    <vcpu id='1' enabled='yes' hotpluggable='yes' order='2'/>
    <vcpu id='2' enabled='no' hotpluggable='yes'/>
    <vcpu id='3' enabled='no' hotpluggable='yes'/>
  </vcpus>
  <iothreads>2</iothreads>
  <iothreadids><iothread id='1'/><iothread id='4'/></iothreadids>
  <numatune><memory mode='strict' placement='auto'/></numatune>
  <memoryBacking><allocation mode='immediate' threads='2'/></memoryBacking>
  <sysinfo type='smbios'><bios><entry name='vendor'>Acme</entry></bios></sysinfo>
  <os>
    <type arch='x86_64' machine='pc'>hvm</type>
    <boot dev='hd'/>
    <bootmenu enable='no'/>
    <bios useserial='yes' rebootTimeout='5000'/>
    <smbios mode='sysinfo'/>
  </os>
  <cpu mode='custom' match='exact'>
    <model fallback='forbid'>qemu64</model>
    <topology sockets='2' dies='1' cores='2' threads='1'/>
    <numa>
      <cell id='0' cpus='0-1' memory='131072' unit='KiB'>
        <distances><sibling id='0' value='10'/><sibling id='1' value='21'/></distances>
      </cell>
      <cell id='1' cpus='2-3' memory='131072' unit='KiB' discard='yes'>
        <distances><sibling id='0' value='21'/><sibling id='1' value='10'/></distances>
      </cell>
    </numa>
  </cpu>
  <devices><serial type='pty'><target port='0'/></serial></devices>
</domain>`, bios))
	acctest.RemoveDomainAtEnd(t, bios)
	before := map[string]string{uefi: platformShape(t, uefi), bios: platformShape(t, bios)}

	generated := generateConfigPlansCleanAll(t, map[string]string{"libvirt_domain.uefi": uefi, "libvirt_domain.bios": bios})
	for _, want := range []string{`<metadata>`, `libosinfo:os`, `inv:owner`, `qemu:capabilities`, `fw_cfg_files`, `vcpu_cpuset`,
		`vcpu_placement`, `<vcpus>`, `<iothreadids>`, `<allocation`, `<bios useserial`, `<distances>`, `loader`, `OVMF_VARS_4M.fd`,
		`<bootmenu enable='no'/>`} {
		if !strings.Contains(generated, want) {
			t.Errorf("the generated configuration has no %s:\n%s", want, generated)
		}
	}

	// Owned by the generated configuration, one harmless change each: nothing else moves.
	imports := fmt.Sprintf("import {\n  to = libvirt_domain.uefi\n  id = %q\n}\nimport {\n  to = libvirt_domain.bios\n  id = %q\n}\n", uefi, bios)
	w := newCLIWork(t, acctest.ProviderBlock("")+imports+generated)
	w.mustRun("apply", "-auto-approve", "-input=false")
	w.write("main.tf", acctest.ProviderBlock("")+describeAll(generated))
	if out, code := w.run("apply", "-auto-approve", "-input=false"); code != 0 || !strings.Contains(out, "0 added, 2 changed, 0 destroyed") {
		t.Fatalf("description change (exit %d):\n%s", code, out)
	}
	if out, code := w.run("plan", "-input=false", "-detailed-exitcode"); code != 0 {
		t.Fatalf("the plan after the description change is not empty (exit %d):\n%s", code, out)
	}
	for name, shape := range before {
		if after := platformShape(t, name); after != shape {
			t.Fatalf("a description change changed the platform of %s:\nbefore %s\nafter  %s", name, shape, after)
		}
	}

	// Destroyed, then recreated from the generated configuration on the clean host.
	w.mustRun("destroy", "-auto-approve", "-input=false")
	w.write("main.tf", acctest.ProviderBlock("")+generated)
	if out, code := w.run("apply", "-auto-approve", "-input=false"); code != 0 || !strings.Contains(out, "2 added, 0 changed, 0 destroyed") {
		t.Fatalf("apply of the generated configuration on a clean host (exit %d):\n%s\n--- generated:\n%s", code, out, generated)
	}
	if out, code := w.run("plan", "-input=false", "-detailed-exitcode"); code != 0 {
		t.Fatalf("the plan after recreating is not empty (exit %d):\n%s", code, out)
	}
	for name, shape := range before {
		if again := platformShape(t, name); again != shape {
			t.Fatalf("recreated from the generated configuration, %s differs:\nbefore %s\nagain  %s", name, shape, again)
		}
	}
	w.mustRun("destroy", "-auto-approve", "-input=false")
}

// describeAll is describe (domains_adopt_lossless_acc_test.go) for every resource of a
// generated configuration.
func describeAll(generated string) string {
	parts := strings.SplitAfter(generated, "\n}\n")
	for i, p := range parts {
		if strings.Contains(p, `resource "libvirt_domain"`) {
			parts[i] = describe(p)
		}
	}
	return strings.Join(parts, "")
}

// platformShape is the platform of a domain's inactive definition as libvirt prints it:
// what the platform families own, without what libvirt assigns (uuid, addresses) and
// without the provider's own metadata record.
func platformShape(t *testing.T, name string) string {
	t.Helper()
	live, err := acctest.InspectDomain(t, name)
	if err != nil {
		t.Fatal(err)
	}
	d := live.Inactive
	var parts []string
	add := func(label string, v any) {
		if v == nil {
			return
		}
		b, err := xml.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, label+"="+string(b))
	}
	add("vcpu", d.VCPU)
	add("vcpus", d.VCPUs)
	add("iothreadids", d.IOThreadIDs)
	add("memoryBacking", d.MemoryBacking)
	add("numatune", d.NUMATune)
	os := *d.OS
	os.Type = &libvirtxml.DomainOSType{Arch: os.Type.Arch, Type: os.Type.Type} // the machine: libvirt's expansion
	add("os", os)
	add("cpu", d.CPU)
	add("sysinfo", d.SysInfo)
	add("qemu:capabilities", d.QEMUCapabilities)
	for _, want := range []string{`libosinfo:os id="http://debian.org/debian/12"`, `<inv:owner>team-a</inv:owner>`} {
		parts = append(parts, fmt.Sprintf("%s:%v", want, strings.Contains(live.InactiveXML, want)))
	}
	return strings.Join(parts, "\n")
}
