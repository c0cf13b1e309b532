package provider_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/cloudinit"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// checkSeed downloads the seed volume (StorageVolDownload), checks its sha256 against
// state and the files inside the ISO against want.
func checkSeed(t *testing.T, addr, pool, name string, want map[string]string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		rs, ok := s.RootModule().Resources[addr]
		if !ok {
			return fmt.Errorf("%s not in state", addr)
		}
		ctx := acctest.Ctx(t)
		var buf bytes.Buffer
		if err := acctest.Client(t).DownloadVolume(ctx, libvirt.VolumeRef{Pool: pool, Name: name}, &buf); err != nil {
			return err
		}
		sum := sha256.Sum256(buf.Bytes())
		if got := hex.EncodeToString(sum[:]); got != rs.Primary.Attributes["sha256"] {
			return fmt.Errorf("downloaded seed has sha256 %s, state says %s", got, rs.Primary.Attributes["sha256"])
		}
		label, files, err := cloudinit.ReadISO(buf.Bytes())
		if err != nil {
			return fmt.Errorf("downloaded seed does not parse as ISO9660: %w", err)
		}
		if label != "cidata" {
			return fmt.Errorf("label %q, want cidata", label)
		}
		if len(files) != len(want) {
			return fmt.Errorf("seed holds %d files, want %d: %v", len(files), len(want), files)
		}
		for f, content := range want {
			if got, ok := files[f]; !ok || string(got) != content {
				return fmt.Errorf("file %s = %q (present %v), want %q", f, got, ok, content)
			}
		}
		return nil
	}
}

func TestAccCloudinitISO(t *testing.T) {
	name, name2 := acctest.RandomName("seed"), acctest.RandomName("seed")
	const userData = "#cloud-config\npassword: s3cret\nchpasswd: { expire: false }\n"
	const network = "version: 2\nethernets:\n  nic0:\n    match:\n      name: \"e*\"\n    dhcp4: true\n"
	const meta2 = "instance-id: i-meta\nlocal-hostname: from-meta\n"
	const vendor = "#cloud-config\npackages: []\n"
	config := func(userData string) string {
		return acctest.ProviderBlock("") + fmt.Sprintf(`
resource "libvirt_cloudinit_iso" "seed" {
  name           = %[1]q
  pool           = %[3]q
  user_data      = %[4]q
  instance_id    = "i-0123"
  hostname       = "web-1"
  network_config = %[5]q
}

resource "libvirt_cloudinit_iso" "meta" {
  name        = %[2]q
  pool        = %[3]q
  meta_data   = %[6]q
  vendor_data = %[7]q
}
`, name, name2, acctest.Pool(), userData, network, meta2, vendor)
	}

	nc := network
	want, wantSum, err := cloudinit.BuildISO(cloudinit.Seed{UserData: userData, MetaData: "instance-id: i-0123\nlocal-hostname: web-1\n", NetworkConfig: &nc})
	if err != nil || len(want) == 0 {
		t.Fatal(err)
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.VolumesGone(name, name2),
		Steps: []resource.TestStep{
			{
				Config: config(userData),
				// The image is reproducible: its hash is known before anything is made.
				ConfigPlanChecks: acctest.Plans(
					acctest.PlanIs("libvirt_cloudinit_iso.seed", "sha256", wantSum),
					acctest.PlanIs("libvirt_cloudinit_iso.seed", "meta_data", "instance-id: i-0123\nlocal-hostname: web-1\n"),
				),
				ConfigStateChecks: append(
					acctest.State("libvirt_cloudinit_iso.seed", "sha256", wantSum, "path", regexp.MustCompile("/"+name+"$")),
					acctest.State("libvirt_cloudinit_iso.meta", "instance_id", "i-meta", "hostname", "from-meta")...),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkSeed(t, "libvirt_cloudinit_iso.seed", acctest.Pool(), name, map[string]string{
						"user-data":      userData,
						"meta-data":      "instance-id: i-0123\nlocal-hostname: web-1\n",
						"network-config": network,
					}),
					checkSeed(t, "libvirt_cloudinit_iso.meta", acctest.Pool(), name2, map[string]string{
						"user-data":   "",
						"meta-data":   meta2,
						"vendor-data": vendor,
					}),
					acctest.CheckVolume(t, acctest.Pool(), name, func(v *libvirt.VolumeInfo) error {
						if v.Capacity != uint64(len(want)) {
							return fmt.Errorf("seed volume is %d bytes, the ISO %d", v.Capacity, len(want))
						}
						return nil
					}),
				),
			},
			importStep("libvirt_cloudinit_iso.seed", acctest.Pool()+"/"+name, "timeouts"),
			importStep("libvirt_cloudinit_iso.meta", "", "timeouts"),
			{
				// Any change replaces the seed.
				Config:           config(userData + "runcmd: [true]\n"),
				ConfigPlanChecks: acctest.Does("libvirt_cloudinit_iso.seed", acctest.DestroyBeforeCreate, acctest.Planned("libvirt_cloudinit_iso.meta", acctest.Noop)),
			},
		},
	})
}

// noTraceInState fails when any attribute of any resource in state holds marker.
func noTraceInState(marker string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		for addr, rs := range s.RootModule().Resources {
			for k, v := range rs.Primary.Attributes {
				if strings.Contains(v, marker) {
					return fmt.Errorf("state holds the write-only value: %s.%s", addr, k)
				}
			}
		}
		return nil
	}
}

// noTraceInPlan fails when the plan's values (resource changes, planned values, prior
// state; not the configuration, where a literal value is what the user wrote) hold marker.
type noTraceInPlan string

func (m noTraceInPlan) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	b, err := json.Marshal([]any{req.Plan.ResourceChanges, req.Plan.PlannedValues, req.Plan.PriorState, req.Plan.OutputChanges})
	if err != nil {
		resp.Error = err
		return
	}
	if strings.Contains(string(b), string(m)) {
		resp.Error = fmt.Errorf("the plan holds the write-only value %q", string(m))
	}
}

// A seed from write-only contents (Terraform >= 1.11 / OpenTofu >= 1.11): the ISO on the
// host holds them, neither plan nor state does; sha256 is known only after the apply; a
// second plan is empty; a change of the write-only contents alone is not seen, and
// bumping contents_wo_version replaces the seed with the new contents.
func TestAccCloudinitISO_writeOnly(t *testing.T) {
	name := acctest.RandomName("seedwo")
	const res = "libvirt_cloudinit_iso.wo"
	secret := func(gen int) string { return fmt.Sprintf("wo-%d-7c41e2b9-never-in-state", gen) }
	userData := func(gen int) string { return "#cloud-config\npassword: " + secret(gen) + "\n" }
	const network = "version: 2\nethernets:\n  nic0:\n    dhcp4: true\n"
	const vendor = "#cloud-config\npackages: [wo-vendor-3d9a]\n"
	config := func(gen, version int) string {
		return acctest.ProviderBlock("") + fmt.Sprintf(`
resource "libvirt_cloudinit_iso" "wo" {
  name                = %q
  pool                = %q
  instance_id         = "i-wo"
  hostname            = "wo-1"
  user_data_wo        = %q
  network_config_wo   = %q
  vendor_data_wo      = %q
  contents_wo_version = %d
}
`, name, acctest.Pool(), userData(gen), network, vendor, version)
	}
	want := func(gen int) map[string]string {
		return map[string]string{
			"user-data":      userData(gen),
			"meta-data":      "instance-id: i-wo\nlocal-hostname: wo-1\n",
			"network-config": network,
			"vendor-data":    vendor,
		}
	}
	nc, vd := network, vendor
	_, sum1, err := cloudinit.BuildISO(cloudinit.Seed{UserData: userData(1), MetaData: want(1)["meta-data"], NetworkConfig: &nc, VendorData: &vd})
	if err != nil {
		t.Fatal(err)
	}
	nullWO := acctest.State(res,
		"user_data_wo", nil,
		"network_config_wo", nil,
		"vendor_data_wo", nil,
		"user_data", nil,
		"network_config", nil,
		"vendor_data", nil,
	)
	acctest.Run(t, resource.TestCase{
		TerraformVersionChecks: []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_11_0)},
		CheckDestroy:           acctest.VolumesGone(name),
		Steps: []resource.TestStep{
			{
				Config: config(1, 1),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						acctest.Planned(res, acctest.Create),
						acctest.PlanUnknown(res, "sha256"),
						acctest.PlanIs(res, "meta_data", want(1)["meta-data"]),
						noTraceInPlan(secret(1)),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{acctest.NoChange(), noTraceInPlan(secret(1))},
				},
				ConfigStateChecks: append(acctest.State(res, "sha256", sum1, "contents_wo_version", 1), nullWO...),
				Check: resource.ComposeAggregateTestCheckFunc(
					noTraceInState(secret(1)),
					noTraceInState("wo-vendor-3d9a"),
					checkSeed(t, res, acctest.Pool(), name, want(1)),
				),
			},
			{
				// New write-only contents, same version: Terraform cannot see the change.
				Config:           config(2, 1),
				ConfigPlanChecks: acctest.Before(acctest.NoChange()),
				Check:            checkSeed(t, res, acctest.Pool(), name, want(1)),
			},
			{
				Config: config(2, 2),
				ConfigPlanChecks: acctest.Plans(
					acctest.Planned(res, acctest.DestroyBeforeCreate),
					acctest.PlanUnknown(res, "sha256"),
					noTraceInPlan(secret(2)),
				),
				ConfigStateChecks: nullWO,
				Check: resource.ComposeAggregateTestCheckFunc(
					noTraceInState(secret(2)),
					checkSeed(t, res, acctest.Pool(), name, want(2)),
				),
			},
		},
	})
}
