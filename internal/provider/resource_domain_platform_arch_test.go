package provider_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// os.arch = "aarch64" on this x86_64 host: defined and started under TCG with the
// provider's ARM defaults (machine virt, cortex-a57, no apic, no acpi without UEFI),
// running with no OS (no firmware, no disk, nothing to wait for); state holds os as
// written (the emulator and machine libvirt chose stay out of it), the second plan is
// empty, the import writes the same os (the arch differs from the host's, the rest is
// the default) and destroy removes it (asked of libvirt).
func TestAccDomainArch_aarch64Started(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("arch")
	config := acctest.ProviderBlock("") + resourceHCL("libvirt_domain", "test", attr("name", name), attr("vcpu", 1), attr("memory_mib", 128),
		`os = { arch = "aarch64" }`, `graphics = { type = "none" }`, `shutdown = { timeout = "0s" }`)
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{
				Config:           config,
				ConfigPlanChecks: acctest.Plans(),
				ConfigStateChecks: acctest.State(domRes, "state", "running", "os.arch", "aarch64", "os.emulator", nil, "os.machine", nil,
					"type", "qemu", "features", nil),
				Check: acctest.HostCheck(func() error {
					d, err := acctest.InspectDomain(t, name)
					if err != nil {
						return err
					}
					ty := d.Live.OS.Type
					if !d.Active || ty.Arch != "aarch64" || !strings.HasPrefix(ty.Machine, "virt") || d.Live.Devices.Emulator != "/usr/bin/qemu-system-aarch64" {
						return fmt.Errorf("want a running aarch64 virt domain on qemu-system-aarch64, got active %v %+v %s", d.Active, ty, d.Live.Devices.Emulator)
					}
					if c := d.Live.CPU; c == nil || c.Mode != "custom" || c.Model == nil || c.Model.Value != "cortex-a57" {
						return fmt.Errorf("want the cortex-a57 CPU, got %+v", c)
					}
					return nil
				}),
			},
			{ResourceName: domRes, ImportState: true, ImportStateVerify: true, ImportStateId: name,
				ImportStateVerifyIgnore: []string{"timeouts", "update_method", "shutdown"}},
		},
	})
}

// Import: an aarch64 domain defined by virsh (as the lead smoke-tested it) plans clean
// after -generate-config-out, which names its arch (its emulator and machine are the
// defaults for it: left out). An x86 define-only domain that sets os.emulator alone
// plans clean with os.arch null in state; writing os.arch = "aarch64" then replaces it
// (the state has no arch: planArch asks the domain for its own) with one that has the
// new arch's emulator, machine and CPU, none of which enters state.
func TestAccDomainArch_importAndEmulator(t *testing.T) {
	acctest.RequireAcc(t)
	virshDefinedPlansClean(t, "arch", `  <os><type arch='aarch64' machine='virt'>hvm</type></os>
  <cpu mode='custom'><model>cortex-a57</model></cpu>
  <devices><serial type='pty'/></devices>`, `arch`, `"aarch64"`)

	name := acctest.RandomName("arch")
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{{
			Config: acctest.ProviderBlock("") + resourceHCL("libvirt_domain", "test", attr("name", name), attr("vcpu", 1), attr("memory_mib", 64),
				attr("running", false), `os = { emulator = "/usr/bin/qemu-system-x86_64" }`),
			ConfigPlanChecks:  acctest.Plans(),
			ConfigStateChecks: acctest.State(domRes, "os.arch", nil, "os.emulator", "/usr/bin/qemu-system-x86_64", "os.machine", nil, "features", nil),
			Check: acctest.HostCheck(func() error {
				d, err := acctest.InspectDomain(t, name)
				if err != nil {
					return err
				}
				if d.Inactive.Devices.Emulator != "/usr/bin/qemu-system-x86_64" || d.Inactive.OS.Type.Arch != "x86_64" {
					return fmt.Errorf("emulator %q arch %q", d.Inactive.Devices.Emulator, d.Inactive.OS.Type.Arch)
				}
				return nil
			}),
		}, {
			// A new arch replaces the domain; the replacement gets the new arch's emulator and machine.
			Config: acctest.ProviderBlock("") + resourceHCL("libvirt_domain", "test", attr("name", name), attr("vcpu", 1), attr("memory_mib", 64),
				attr("running", false), `os = { arch = "aarch64" }`),
			ConfigPlanChecks:  acctest.Plans(acctest.Planned(domRes, acctest.DestroyBeforeCreate)),
			ConfigStateChecks: acctest.State(domRes, "os.arch", "aarch64", "os.emulator", nil, "os.machine", nil),
			Check: acctest.HostCheck(func() error {
				d, err := acctest.InspectDomain(t, name)
				if err != nil {
					return err
				}
				in := d.Inactive
				if in.Devices.Emulator != "/usr/bin/qemu-system-aarch64" || in.OS.Type.Machine != "virt-7.2" || in.CPU == nil || in.CPU.Model == nil || in.CPU.Model.Value != "cortex-a57" {
					return fmt.Errorf("replacement: emulator %q machine %q cpu %+v", in.Devices.Emulator, in.OS.Type.Machine, in.CPU)
				}
				return nil
			}),
		}},
	})
}
