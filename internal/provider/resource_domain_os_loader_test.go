package provider_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// Define-only: UEFI firmware chosen by hand (os.loader, os.nvram with a template only)
// is in the definition instead of auto-selection, and in state exactly as written (the
// nvram path libvirt gives the domain stays out of it); the import writes the same loader
// and nvram; removing them goes back to auto-selection (firmware = "uefi").
func TestAccDomainLoader_defineOnly(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("loader")
	const code, vars = "/usr/share/OVMF/OVMF_CODE_4M.fd", "/usr/share/OVMF/OVMF_VARS_4M.fd"
	config := func(os string) string {
		return acctest.ProviderBlock("") + resourceHCL("libvirt_domain", "test", attr("name", name), attr("vcpu", 1), attr("memory_mib", 64),
			attr("running", false), attr("firmware", "uefi"), `graphics = { type = "none" }`, os)
	}
	firmware := func(auto bool, loader, template string) resource.TestCheckFunc {
		return acctest.HostCheck(func() error {
			d, err := acctest.InspectDomain(t, name)
			if err != nil {
				return err
			}
			os := d.Inactive.OS
			got := fmt.Sprintf("auto=%v", os.Firmware == "efi")
			if os.Loader != nil {
				got += fmt.Sprintf(" loader=%s type=%s readonly=%s", os.Loader.Path, os.Loader.Type, os.Loader.Readonly)
			}
			if os.NVRam != nil {
				got += fmt.Sprintf(" template=%s nvram=%s", os.NVRam.Template, os.NVRam.NVRam)
			}
			want := fmt.Sprintf("auto=%v", auto)
			if loader != "" {
				want += fmt.Sprintf(" loader=%s type=pflash readonly=yes template=%s nvram=/var/lib/libvirt/qemu/nvram/%s_VARS.fd", loader, template, name)
			}
			if got != want {
				return fmt.Errorf("firmware of %s: %s, want %s", name, got, want)
			}
			return nil
		})
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{
				Config: config(fmt.Sprintf(`os = {
    machine = "q35"
    loader  = { path = %q, type = "pflash", readonly = true }
    nvram   = { template = %q }
  }`, code, vars)),
				ConfigPlanChecks: acctest.Plans(),
				ConfigStateChecks: acctest.State(domRes, "firmware", "uefi", "os.loader.path", code, "os.loader.type", "pflash",
					"os.loader.readonly", true, "os.loader.secure", nil, "os.nvram.path", nil, "os.nvram.template", vars),
				Check: firmware(false, code, vars),
			},
			// os.machine: the import writes libvirt's pc-q35-7.2 for the q35 written (it cannot know the alias).
			{ResourceName: domRes, ImportState: true, ImportStateVerify: true, ImportStateId: name,
				ImportStateVerifyIgnore: []string{"timeouts", "update_method", "os.machine"}},
			{
				Config:            config(`os = { machine = "q35" }`),
				ConfigPlanChecks:  acctest.Updates(domRes, "definition"),
				ConfigStateChecks: acctest.State(domRes, "firmware", "uefi", "os.loader", nil, "os.nvram", nil),
				Check:             firmware(true, "", ""),
			},
		},
	})
}
