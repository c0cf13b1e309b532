package provider_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

func featuresHCL(name, features string) string {
	return acctest.ProviderBlock("") + resourceHCL("libvirt_domain", "test", attr("name", name), attr("vcpu", 1),
		attr("memory_mib", 64), attr("running", false), `os = { machine = "q35" }`, `graphics = { type = "none" }`, features)
}

// Define-only: features are written (spinlocks with its retries), state holds exactly what
// was written (acpi and apic, which the domain has, null), and the import of the domain,
// which differs from a new one (smm, pae, kvm hidden, Hyper-V), writes the same; turning
// some off rewrites the definition and keeps the rest (smm, which the configuration no
// longer names, stays on and null); without features in the configuration the plan is
// empty and features null, the domain keeping what it has.
func TestAccDomainFeatures_defineOnly(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("feat")
	hyperv := func(want ...string) resource.TestCheckFunc {
		return acctest.HostCheck(func() error {
			d, err := acctest.InspectDomain(t, name)
			if err != nil {
				return err
			}
			f := d.Inactive.Features
			if f == nil || f.ACPI == nil || f.APIC == nil || f.SMM == nil {
				return fmt.Errorf("features %+v: want acpi, apic and smm", f)
			}
			var got []string
			if h := f.HyperV; h != nil {
				if h.Relaxed != nil {
					got = append(got, "relaxed")
				}
				if h.Spinlocks != nil {
					if h.Spinlocks.Retries != 8191 {
						return fmt.Errorf("spinlocks retries %d", h.Spinlocks.Retries)
					}
					got = append(got, "spinlocks")
				}
			}
			if strings.Join(got, ",") != strings.Join(want, ",") {
				return fmt.Errorf("hyperv %v, want %v", got, want)
			}
			return nil
		})
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{
				Config:           featuresHCL(name, `features = { smm = true, pae = true, kvm_hidden = true, hyperv = ["spinlocks", "relaxed"] }`),
				ConfigPlanChecks: acctest.Plans(),
				ConfigStateChecks: acctest.State(domRes, "features.acpi", nil, "features.apic", nil, "features.smm", true,
					"features.pae", true, "features.hap", nil, "features.kvm_hidden", true),
				Check: hyperv("relaxed", "spinlocks"),
			},
			// The import writes what differs from a new domain: what the configuration wrote.
			{ResourceName: domRes, ImportState: true, ImportStateVerify: true, ImportStateId: name, ImportStateVerifyIgnore: []string{"timeouts", "os.machine"}}, // libvirt expands q35
			{
				Config:           featuresHCL(name, `features = { pae = false, kvm_hidden = false, hyperv = [] }`),
				ConfigPlanChecks: acctest.Updates(domRes, "definition"),
				ConfigStateChecks: acctest.State(domRes, "features.smm", nil, "features.pae", false, "features.kvm_hidden", false,
					"features.hyperv", knownvalue.SetExact([]knownvalue.Check{})),
				Check: hyperv(),
			},
			{Config: featuresHCL(name, ""), ConfigPlanChecks: acctest.Plans(), ConfigStateChecks: acctest.State(domRes, "features", nil), Check: hyperv()},
		},
	})
}

// A domain virsh defined with Hyper-V enlightenments (and a vendor_id and spinlocks
// retries the features attribute does not say) imports, and what -generate-config-out
// writes for it — the whole <features> in extra_xml, features null — plans clean.
func TestAccDomainFeatures_importDefined(t *testing.T) {
	acctest.RequireAcc(t)
	virshDefinedPlansClean(t, "feat", `  <os><type arch='x86_64' machine='q35'>hvm</type></os>
  <features><acpi/><pae/><hap state='on'/><smm state='on'/>
    <hyperv mode='custom'><relaxed state='on'/><vapic state='on'/><spinlocks state='on' retries='4096'/><vendor_id state='on' value='kvmforge'/></hyperv>
    <kvm><hidden state='on'/></kvm>
  </features>`, `<vapic state='on'/>`, `retries='4096'`, `<vendor_id state='on' value='kvmforge'/>`, `<hidden state='on'/>`)
}
