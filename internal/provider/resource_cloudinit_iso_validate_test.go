package provider_test

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// Plan-time validation of libvirt_cloudinit_iso: no daemon is asked.
func TestCloudinitISO_validation(t *testing.T) {
	tests := []struct {
		name string
		body string
		want string
	}{
		{"network_config not YAML", `instance_id = "i-1"
  network_config = "version: 2\n  ethernets: ["`, `(?s)Invalid YAML in network_config.*does not parse as YAML.*check its indentation`},
		{"network_config not a mapping", `instance_id = "i-1"
  network_config = "- eth0"`, `(?s)Invalid YAML in network_config.*not a mapping`},
		{"meta_data and instance_id", `meta_data = "instance-id: a"
  instance_id = "a"`, `(?s)Conflicting meta-data.*use meta_data for the whole file, or instance_id.*not\s+both`},
		{"no meta-data", `user_data = "#cloud-config"`, `(?s)Missing meta-data.*set instance_id \(and hostname\)`},
		{"hostname without instance_id", `hostname = "web-1"`, `(?s)Missing instance_id.*Set instance_id too`},
		{"bad hostname", `instance_id = "i-1"
  hostname = "web_1"`, `(?s)Invalid hostname.*hostname "web_1" is not a valid host name.*e.g\.\s+"web-1"`},
		{"instance_id with newline", `instance_id = "a\nb"`, `(?s)Invalid instance_id.*control characters`},
		{"name with slash", `name = "x/y"`, `(?s)Invalid volume name.*contains '/'`},
		{"cloud-config not YAML", `instance_id = "i-1"
  user_data = "#cloud-config\nusers: [\n"`, `(?s)Invalid YAML in user_data.*user_data starts with #cloud-config but does not parse as YAML.*fix the document`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := `name = "tfacc-seed"`
			if regexp.MustCompile(`^name =`).MatchString(tt.body) {
				name, tt.body = tt.body, `instance_id = "i-1"`
			}
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config: acctest.ProviderBlock("") + fmt.Sprintf(`
resource "libvirt_cloudinit_iso" "s" {
  %s
  pool = "default"
  %s
}
`, name, tt.body),
					PlanOnly:    true,
					ExpectError: wrapped(tt.want),
				}},
			})
		})
	}
}
