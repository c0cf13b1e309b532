package provider_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

const (
	shmemXML = `<shmem name="tfacc-ivshmem"><model type="ivshmem-plain"/><size unit="M">4</size></shmem>`
	hubXML   = `<hub type="usb"/>`
)

// device_xml on a stopped domain: two devices the schema lacks are defined and plan
// clean (libvirt adds their addresses and aliases), import reads them back, removing one
// removes its device only, a fragment libvirt refuses fails with libvirt's message, and
// one libvirt stores another way fails the apply naming it.
func TestAccDomain_deviceXML(t *testing.T) {
	name := acctest.RandomName("devxml")
	config := func(fragments ...string) string {
		list := make([]string, len(fragments))
		for i, f := range fragments {
			list[i] = fmt.Sprintf("%q", f)
		}
		return acctest.ProviderBlock("") + resourceHCL("libvirt_domain", "test", attr("name", name), attr("vcpu", 1),
			attr("memory_mib", 64), attr("running", false), "device_xml = ["+strings.Join(list, ", ")+"]")
	}
	devices := func(shmems, hubs int) resource.TestCheckFunc {
		return acctest.HostCheck(func() error {
			d, err := acctest.InspectDomain(t, name)
			if err != nil {
				return err
			}
			if s, h := len(d.Inactive.Devices.Shmems), len(d.Inactive.Devices.Hubs); s != shmems || h != hubs {
				return fmt.Errorf("%d shmem and %d hub devices, want %d and %d", s, h, shmems, hubs)
			}
			return nil
		})
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{
				Config:            config(shmemXML, hubXML),
				ConfigPlanChecks:  acctest.Plans(),
				ConfigStateChecks: acctest.State(domRes, "device_xml.0", shmemXML, "device_xml.1", hubXML),
				Check:             devices(1, 1),
			},
			{ResourceName: domRes, ImportState: true, ImportStateVerify: true, ImportStateId: name, ImportStateVerifyIgnore: []string{"timeouts"}},
			{
				Config:           config(hubXML),
				ConfigPlanChecks: acctest.Updates(domRes, "definition"),
				Check:            devices(0, 1),
			},
			{
				// A fragment libvirt refuses: its message.
				Config:      config(hubXML, `<shmem name="tfacc-ivshmem"/>`),
				ExpectError: regexp.MustCompile(`ivshmem\s+device\s+is\s+not\s+supported`),
			},
			{
				// libvirt writes the size in MiB: as written here it would never plan clean.
				Config:      config(hubXML, `<shmem name="tfacc-ivshmem"><model type="ivshmem-plain"/><size unit="KiB">4096</size></shmem>`),
				ExpectError: regexp.MustCompile(`device_xml\[1\][\s\S]*libvirt\s+stored\s+the\s+device\s+differently`),
			},
		},
	})
}

// A domain defined by virsh with a device the schema lacks imports and plans clean: the
// device is kept as the domain's own, not read into device_xml.
func TestAccDomain_deviceXMLImportDefined(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("devxmlimp")
	acctest.DefineDomain(t, fmt.Sprintf(`<domain type='qemu'><name>%s</name><memory unit='MiB'>64</memory><vcpu>1</vcpu>
  <os><type arch='x86_64'>hvm</type></os><devices>%s</devices></domain>`, name, shmemXML))
	acctest.RemoveDomainAtEnd(t, name)
	if generated := generateConfigPlansClean(t, domRes, name); strings.Contains(generated, "device_xml = [") {
		t.Errorf("the generated configuration took the domain's own device into device_xml:\n%s", generated)
	}
}

// qemu.args and qemu.env on a stopped domain: written under <qemu:commandline> in order,
// plan clean, state exactly as written, import back (the domain differs from a new one:
// the import writes qemu); qemu.env removed goes away with qemu.args kept, and without
// qemu the command line goes away and qemu is null.
func TestAccDomain_qemuCommandline(t *testing.T) {
	name := acctest.RandomName("qemuargs")
	config := func(extra ...string) string {
		return acctest.ProviderBlock("") + resourceHCL("libvirt_domain", "test", append([]string{attr("name", name), attr("vcpu", 1),
			attr("memory_mib", 64), attr("running", false)}, extra...)...)
	}
	args := `args = ["-fw_cfg", "name=opt/com.example/tfacc,string=hello"]`
	commandline := func(want string) resource.TestCheckFunc {
		return acctest.HostCheck(func() error {
			d, err := acctest.InspectDomain(t, name)
			if err != nil {
				return err
			}
			got := "none"
			if c := d.Inactive.QEMUCommandline; c != nil {
				var parts []string
				for _, a := range c.Args {
					parts = append(parts, a.Value)
				}
				for _, e := range c.Envs {
					parts = append(parts, e.Name+"="+e.Value)
				}
				got = strings.Join(parts, " ")
			}
			if got != want {
				return fmt.Errorf("qemu command line %q, want %q", got, want)
			}
			return nil
		})
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{
				Config:            config(`qemu = {`, args, `env = { TFACC = "1" } }`),
				ConfigPlanChecks:  acctest.Plans(),
				ConfigStateChecks: acctest.State(domRes, "qemu.args.1", "name=opt/com.example/tfacc,string=hello", "qemu.env.TFACC", "1"),
				Check:             commandline("-fw_cfg name=opt/com.example/tfacc,string=hello TFACC=1"),
			},
			{ResourceName: domRes, ImportState: true, ImportStateVerify: true, ImportStateId: name, ImportStateVerifyIgnore: []string{"timeouts"}},
			{
				Config:            config(`qemu = {`, args, `}`),
				ConfigPlanChecks:  acctest.Updates(domRes, "definition"),
				ConfigStateChecks: acctest.State(domRes, "qemu.env", nil),
				Check:             commandline("-fw_cfg name=opt/com.example/tfacc,string=hello"),
			},
			{Config: config(), ConfigPlanChecks: acctest.Updates(domRes, "definition"), ConfigStateChecks: acctest.State(domRes, "qemu", nil), Check: commandline("none")},
		},
	})
}
