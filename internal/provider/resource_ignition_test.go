package provider_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

const ignitionRes = "libvirt_ignition.ign"

// ignitionContent is what jsonencode() below renders (keys sorted, no spaces).
const ignitionContent = `{"ignition":{"version":"3.4.0"},"passwd":{"users":[{"name":"core","sshAuthorizedKeys":["ssh-ed25519 AAAA test"]}]}}`

// ignitionHCL is libvirt_ignition.ign named name in pool, with lines.
func ignitionHCL(name, pool string, lines ...string) string {
	return resourceHCL("libvirt_ignition", "ign", append([]string{attr("name", name), attr("pool", pool)}, lines...)...)
}

func ignitionConfig(name string) string {
	return ignitionHCL(name, acctest.Pool(), attr("content", hcl(`jsonencode({
    ignition = { version = "3.4.0" }
    passwd   = { users = [{ name = "core", sshAuthorizedKeys = ["ssh-ed25519 AAAA test"] }] }
  })`)))
}

// volumeContent downloads a volume whole.
func volumeContent(t *testing.T, key string) (string, error) {
	b, err := acctest.VolumeContent(t, key)
	return string(b), err
}

// The config lands byte for byte in a raw volume; sha256 is known at plan time; import
// by <pool>/<name> reads the content back and plans clean.
func TestAccIgnition_basic(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("ign") + ".ign"
	config := acctest.ProviderBlock("") + ignitionConfig(name)
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.VolumesGone(name),
		Steps: []resource.TestStep{
			{
				Config:           config,
				ConfigPlanChecks: acctest.Plans(acctest.PlanIs(ignitionRes, "sha256", sha256Hex(ignitionContent))),
				ConfigStateChecks: acctest.State(ignitionRes,
					"name", name,
					"sha256", sha256Hex(ignitionContent),
				),
				Check: func(s *terraform.State) error {
					r := s.RootModule().Resources[ignitionRes].Primary
					if r.Attributes["path"] == "" {
						return fmt.Errorf("no path in state")
					}
					got, err := volumeContent(t, r.ID)
					if err != nil {
						return err
					}
					if got != ignitionContent {
						return fmt.Errorf("volume holds %q, want %q", got, ignitionContent)
					}
					return nil
				},
			},
			importStep(ignitionRes, acctest.Pool()+"/"+name),
			{
				// Removed behind Terraform's back: the plan makes it again.
				PreConfig:        func() { acctest.DeleteVolume(t, acctest.Pool(), name) },
				Config:           config,
				ConfigPlanChecks: acctest.Before(acctest.Planned(ignitionRes, acctest.Create)),
			},
		},
	})
}

func TestAccIgnition_invalidJSON(t *testing.T) {
	acctest.RequireAcc(t)
	acctest.Run(t, resource.TestCase{
		// The refused content made no volume.
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"volume default/tfacc-bad.ign": acctest.VolumeLookup("default", "tfacc-bad.ign")}),
		Steps: []resource.TestStep{{
			Config:      acctest.ProviderBlock("") + ignitionHCL("tfacc-bad.ign", "default", attr("content", "{ignition: 3}")),
			PlanOnly:    true,
			ExpectError: acctest.ErrorText("content does not parse as JSON"),
		}},
	})
}

// libvirt_domain.ignition_id writes the fw_cfg entry QEMU hands to Fedora CoreOS /
// Flatcar, reads back without drift (and on import), and goes away when unset. A stopped
// domain is enough: the entry lives in the definition.
func TestAccIgnition_domainFWCfg(t *testing.T) {
	name, disk := acctest.DomainDisk(t, "ign")
	config := func(withIgnition bool) string {
		ref := ""
		if withIgnition {
			ref = "ignition_id = libvirt_ignition.ign.id"
		}
		return acctest.ProviderBlock("") + ignitionConfig(name+".ign") + domainHCL(name, disk, attr("running", false), ref)
	}
	// fwcfg returns the file of the domain's Ignition fw_cfg entry ("" when none).
	fwcfg := func() (string, error) {
		live, err := acctest.InspectDomain(t, name)
		if err != nil {
			return "", err
		}
		file := ""
		for _, si := range live.Inactive.SysInfo {
			if si.FWCfg == nil {
				continue
			}
			for _, e := range si.FWCfg.Entry {
				if e.Name == "opt/com.coreos/config" {
					file = e.File
				}
			}
		}
		return file, nil
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{
			"domain " + name: acctest.DomainLookup(name),
			"ignition":       acctest.VolumeLookup(acctest.Pool(), name+".ign"),
		}),
		Steps: []resource.TestStep{
			{
				Config:           config(true),
				ConfigPlanChecks: acctest.Plans(),
				Check: func(s *terraform.State) error {
					want := s.RootModule().Resources[ignitionRes].Primary.Attributes["path"]
					got, err := fwcfg()
					if err != nil {
						return err
					}
					if got == "" || got != want {
						return fmt.Errorf("fw_cfg opt/com.coreos/config file = %q, want %q", got, want)
					}
					return nil
				},
				ConfigStateChecks: acctest.State(domRes, "state", "shutoff"),
			},
			importStep(domRes, name, "timeouts"),
			{
				Config:           config(false),
				ConfigPlanChecks: acctest.Does(domRes, acctest.Update),
				Check: func(*terraform.State) error {
					if got, err := fwcfg(); err != nil || got != "" {
						return fmt.Errorf("fw_cfg entry still there after ignition_id was removed: %q (err %v)", got, err)
					}
					return nil
				},
			},
		},
	})
}

// content or content_wo, exactly one; content_wo is checked as JSON too.
func TestIgnition_writeOnlyValidation(t *testing.T) {
	expectPlanErrors(t, "resource \"libvirt_ignition\" \"ign\" {\n  name = \"tfacc-bad.ign\"\n  pool = \"default\"\n  %s\n}\n", []planCase{
		{"neither", ``, `Missing Attribute Configuration.*Exactly one of these attributes must be configured: \[content,content_wo\]`},
		{"both", `content = "{}"` + "\n  content_wo = \"{}\"", `Invalid Attribute Combination.*Exactly one of these attributes must be configured: \[content,content_wo\]`},
		{"content_wo JSON", `content_wo = "{ignition: 3}"`, `Invalid JSON in content_wo.*content_wo does not parse as JSON`},
	}, tfversion.SkipBelow(tfversion.Version1_11_0))
}

// An Ignition config from content_wo: the volume holds it byte for byte, neither plan
// nor state does; sha256 is known after the apply; a second plan is empty; bumping
// content_wo_version stores the new content_wo.
func TestAccIgnition_writeOnly(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("ignwo") + ".ign"
	content := func(gen int) string {
		return fmt.Sprintf(`{"ignition":{"version":"3.4.0"},"passwd":{"users":[{"name":"core","passwordHash":"ign-wo-%d-5e0c-never-in-state"}]}}`, gen)
	}
	secret := func(gen int) string { return fmt.Sprintf("ign-wo-%d-5e0c-never-in-state", gen) }
	config := func(gen, version int) string {
		return acctest.ProviderBlock("") + ignitionHCL(name, acctest.Pool(), attr("content_wo", content(gen)), attr("content_wo_version", version))
	}
	holds := func(gen int) resource.TestCheckFunc {
		return func(s *terraform.State) error {
			got, err := volumeContent(t, s.RootModule().Resources[ignitionRes].Primary.ID)
			if err != nil {
				return err
			}
			if got != content(gen) {
				return fmt.Errorf("volume holds %q, want %q", got, content(gen))
			}
			return nil
		}
	}
	acctest.Run(t, resource.TestCase{
		TerraformVersionChecks: []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_11_0)},
		CheckDestroy:           acctest.VolumesGone(name),
		Steps: []resource.TestStep{
			{
				Config:           config(1, 1),
				ConfigPlanChecks: acctest.Plans(acctest.PlanUnknown(ignitionRes, "sha256"), noTraceInPlan(secret(1))),
				ConfigStateChecks: acctest.State(ignitionRes,
					"sha256", sha256Hex(content(1)),
					"content", nil,
					"content_wo", nil,
				),
				Check: resource.ComposeAggregateTestCheckFunc(noTraceInState(secret(1)), holds(1)),
			},
			{
				Config:            config(2, 2),
				ConfigPlanChecks:  acctest.Plans(acctest.Planned(ignitionRes, acctest.DestroyBeforeCreate), noTraceInPlan(secret(2))),
				ConfigStateChecks: acctest.State(ignitionRes, "sha256", sha256Hex(content(2))),
				Check:             resource.ComposeAggregateTestCheckFunc(noTraceInState(secret(2)), holds(2)),
			},
		},
	})
}
