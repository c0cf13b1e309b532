package provider_test

import (
	"context"
	"regexp"
	"testing"

	fwresource "github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider"
)

// Plan-time validation of libvirt_cloudinit_iso: no daemon is asked.
func TestCloudinitISO_validation(t *testing.T) {
	cases := []planCase{
		{"network_config not YAML", `instance_id = "i-1"
  network_config = "version: 2\n  ethernets: ["`, `Invalid YAML in network_config.*does not parse as YAML.*check its indentation`},
		{"network_config not a mapping", `instance_id = "i-1"
  network_config = "- eth0"`, `Invalid YAML in network_config.*not a mapping`},
		{"meta_data and instance_id", `meta_data = "instance-id: a"
  instance_id = "a"`, `Conflicting meta-data.*use meta_data for the whole file, or instance_id.*not\s+both`},
		{"no meta-data", `user_data = "#cloud-config"`, `Missing meta-data.*set instance_id \(and hostname\)`},
		{"hostname without instance_id", `hostname = "web-1"`, `Missing instance_id.*Set instance_id too`},
		{"bad hostname", `instance_id = "i-1"
  hostname = "web_1"`, `Invalid hostname.*hostname "web_1" is not a valid host name.*e.g\.\s+"web-1"`},
		{"instance_id with newline", `instance_id = "a\nb"`, `Invalid instance_id.*control characters`},
		{"name with slash", `instance_id = "i-1"`, `Invalid volume name.*contains '/'`},
		{"cloud-config not YAML", `instance_id = "i-1"
  user_data = "#cloud-config\nusers: [\n"`, `Invalid YAML in user_data.*user_data starts with #cloud-config but does not parse as YAML.*fix the document`},
	}
	for i, c := range cases {
		name := "tfacc-seed"
		if c.name == "name with slash" {
			name = "x/y"
		}
		cases[i].body = attr("name", name) + "\n  " + c.body
	}
	expectPlanErrors(t, "resource \"libvirt_cloudinit_iso\" \"s\" {\n  pool = \"default\"\n  %s\n}\n", cases)
}

// The write-only contents conflict with their state-kept twins, are checked like them,
// and leave sha256 unknown at plan (a write-only value may differ at apply).
func TestCloudinitISO_writeOnlyValidation(t *testing.T) {
	expectPlanErrors(t, "resource \"libvirt_cloudinit_iso\" \"s\" {\n  name = \"tfacc-seed\"\n  pool = \"default\"\n  instance_id = \"i-1\"\n  %s\n}\n", []planCase{
		{"user_data and user_data_wo", `user_data = "a"
  user_data_wo = "b"`, `Invalid Attribute Combination.*user_data`},
		{"network_config and network_config_wo", `network_config = "version: 2"
  network_config_wo = "version: 2"`, `Invalid Attribute Combination.*network_config`},
		{"vendor_data and vendor_data_wo", `vendor_data = "a"
  vendor_data_wo = "b"`, `Invalid Attribute Combination.*vendor_data`},
		{"network_config_wo not YAML", `network_config_wo = "- eth0"`, `Invalid YAML in network_config_wo.*not a mapping`},
		{"user_data_wo cloud-config not YAML", `user_data_wo = "#cloud-config\nusers: [\n"`, `Invalid YAML in user_data_wo.*starts with #cloud-config`},
	}, tfversion.SkipBelow(tfversion.Version1_11_0))

	acctest.RunUnit(t, resource.TestCase{
		TerraformVersionChecks: []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_11_0)},
		Steps: []resource.TestStep{{
			Config: acctest.ProviderBlock("") +
				resourceHCL("libvirt_cloudinit_iso", "wo", attr("name", "tfacc-seed-wo"), attr("pool", "default"), attr("instance_id", "i-1"),
					attr("user_data_wo", "#cloud-config\npassword: plan-secret\n"), attr("network_config_wo", "version: 2")) +
				resourceHCL("libvirt_cloudinit_iso", "plain", attr("name", "tfacc-seed-plain"), attr("pool", "default"), attr("instance_id", "i-1"),
					attr("user_data", "#cloud-config\n")),
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
			ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPreRefresh: []plancheck.PlanCheck{
				acctest.PlanUnknown("libvirt_cloudinit_iso.wo", "sha256"),
				acctest.PlanIs("libvirt_cloudinit_iso.wo", "meta_data", "instance-id: i-1\n"),
				acctest.PlanIs("libvirt_cloudinit_iso.wo", "user_data_wo", nil),
				acctest.PlanIs("libvirt_cloudinit_iso.plain", "sha256", regexp.MustCompile(`^[0-9a-f]{64}$`)),
			}},
		}},
	})
}

// The contents of a seed and of an Ignition config are sensitive, and each has a
// write-only twin that never reaches plan or state.
func TestSeedSchemas_sensitiveAndWriteOnly(t *testing.T) {
	type attr interface {
		IsSensitive() bool
		IsWriteOnly() bool
	}
	for _, tt := range []struct {
		typ       string
		sensitive []string
		writeOnly []string
	}{
		{"libvirt_cloudinit_iso", []string{"user_data", "network_config", "vendor_data"}, []string{"user_data_wo", "network_config_wo", "vendor_data_wo"}},
		{"libvirt_ignition", []string{"content"}, []string{"content_wo"}},
	} {
		s := resourceSchema(t, tt.typ)
		get := func(n string) attr {
			a, ok := s.Attributes[n]
			if !ok {
				t.Fatalf("%s has no attribute %s", tt.typ, n)
			}
			return a
		}
		for _, n := range tt.sensitive {
			if !get(n).IsSensitive() {
				t.Errorf("%s: %s is not sensitive", tt.typ, n)
			}
		}
		for _, n := range tt.writeOnly {
			if !get(n).IsWriteOnly() {
				t.Errorf("%s: %s is not write-only", tt.typ, n)
			}
		}
	}
}

// resourceSchema is the schema of the provider's resource of type typ.
func resourceSchema(t *testing.T, typ string) schema.Schema {
	t.Helper()
	ctx := context.Background()
	for _, newR := range provider.New("test")().Resources(ctx) {
		r := newR()
		var md fwresource.MetadataResponse
		r.Metadata(ctx, fwresource.MetadataRequest{ProviderTypeName: "libvirt"}, &md)
		if md.TypeName == typ {
			var resp fwresource.SchemaResponse
			r.Schema(ctx, fwresource.SchemaRequest{}, &resp)
			return resp.Schema
		}
	}
	t.Fatalf("the provider has no resource %s", typ)
	return schema.Schema{}
}
