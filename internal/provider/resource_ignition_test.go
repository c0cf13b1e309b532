package provider_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

const ignitionRes = "libvirt_ignition.ign"

// ignitionContent is what jsonencode() below renders (keys sorted, no spaces).
const ignitionContent = `{"ignition":{"version":"3.4.0"},"passwd":{"users":[{"name":"core","sshAuthorizedKeys":["ssh-ed25519 AAAA test"]}]}}`

func ignitionConfig(name string) string {
	return fmt.Sprintf(`
resource "libvirt_ignition" "ign" {
  name    = %q
  pool    = %q
  content = jsonencode({
    ignition = { version = "3.4.0" }
    passwd   = { users = [{ name = "core", sshAuthorizedKeys = ["ssh-ed25519 AAAA test"] }] }
  })
}
`, name, acctest.Pool())
}

// volumeContent downloads a volume whole.
func volumeContent(t *testing.T, key string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var buf bytes.Buffer
	err := acctest.Client(t).DownloadVolume(ctx, libvirt.VolumeRef{Key: key}, &buf)
	return buf.String(), err
}

// The config lands byte for byte in a raw volume; sha256 is known at plan time; import
// by <pool>/<name> reads the content back and plans clean.
func TestAccIgnition_basic(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("ign") + ".ign"
	config := acctest.ProviderBlock("") + ignitionConfig(name)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             acctest.CheckGone(map[string]acctest.Lookup{"volume " + name: acctest.VolumeLookup(acctest.Pool(), name)}),
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectKnownValue(ignitionRes, tfjsonpath.New("sha256"), knownvalue.StringExact(sha256Hex(ignitionContent)))},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(ignitionRes, tfjsonpath.New("name"), knownvalue.StringExact(name)),
					statecheck.ExpectKnownValue(ignitionRes, tfjsonpath.New("sha256"), knownvalue.StringExact(sha256Hex(ignitionContent))),
				},
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
			{
				ResourceName:      ignitionRes,
				ImportState:       true,
				ImportStateId:     acctest.Pool() + "/" + name,
				ImportStateVerify: true,
			},
			{
				// Removed behind Terraform's back: the plan makes it again.
				PreConfig: func() {
					if err := acctest.Client(t).DeleteVolume(context.Background(), libvirt.VolumeRef{Pool: acctest.Pool(), Name: name}); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(ignitionRes, plancheck.ResourceActionCreate)},
				},
			},
		},
	})
}

func TestAccIgnition_invalidJSON(t *testing.T) {
	acctest.RequireAcc(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: acctest.ProviderBlock("") + `
resource "libvirt_ignition" "ign" {
  name    = "tfacc-bad.ign"
  pool    = "default"
  content = "{ignition: 3}"
}
`,
			PlanOnly:    true,
			ExpectError: acctest.ErrorText("content does not parse as JSON"),
		}},
	})
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// libvirt_domain.ignition_id writes the fw_cfg entry QEMU hands to Fedora CoreOS /
// Flatcar, reads back without drift (and on import), and goes away when unset. A stopped
// domain is enough: the entry lives in the definition.
func TestAccIgnition_domainFWCfg(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("ign")
	disk := domAccOverlay(t, name+".qcow2")
	config := func(withIgnition bool) string {
		ref := ""
		if withIgnition {
			ref = "ignition_id = libvirt_ignition.ign.id"
		}
		return acctest.ProviderBlock("") + ignitionConfig(name+".ign") + fmt.Sprintf(`
resource "libvirt_domain" "test" {
  name       = %q
  vcpu       = 1
  memory_mib = 256
  running    = false
  %s
  disk {
    volume_id = %q
  }
}
`, name, ref, disk)
	}
	// fwcfg returns the file of the domain's Ignition fw_cfg entry ("" when none).
	fwcfg := func() (string, error) {
		live, err := domAccInspect(t, name)
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
	resource.Test(t, resource.TestCase{
		PreCheck:                 acctest.PreCheck(t),
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{
			"domain " + name: acctest.DomainLookup(name),
			"ignition":       acctest.VolumeLookup(acctest.Pool(), name+".ign"),
		}),
		Steps: []resource.TestStep{
			{
				Config:           config(true),
				ConfigPlanChecks: emptyAfterApply,
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
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(domRes, tfjsonpath.New("state"), knownvalue.StringExact("shutoff")),
				},
			},
			{
				ResourceName:            domRes,
				ImportState:             true,
				ImportStateId:           name,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
			{
				Config: config(false),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(domRes, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
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
