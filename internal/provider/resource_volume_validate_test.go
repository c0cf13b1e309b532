package provider_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// Plan-time validation of libvirt_volume: no daemon is asked.
func TestVolume_validation(t *testing.T) {
	sum := "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	expectPlanErrors(t, "resource \"libvirt_volume\" \"v\" {\n  name = \"tfacc-v\"\n  pool = \"default\"\n  %s\n}\n", []planCase{
		{"two sources", `source_url = "http://127.0.0.1/a.qcow2"
  clone_from = "default/base.qcow2"`, `Conflicting volume sources.*source_url and clone_from are all set.*Keep one of\s+source_url, source_file, backing_volume or clone_from`},
		{"three sources", `source_file = "/etc/hostname"
  backing_volume = "default/a"
  clone_from = "default/b"`, `source_file and backing_volume and clone_from are all set`},
		{"checksum format", `source_url = "http://127.0.0.1/a.qcow2"
  source_checksum = "md5:abc"`, `Invalid source_checksum.*algorithm "md5" is not supported; expected\s+sha256:<64 hex digits>`},
		{"checksum length", `source_url = "http://127.0.0.1/a.qcow2"
  source_checksum = "sha256:abc"`, `Invalid source_checksum.*64 hex digits, got 3`},
		{"checksum without upload", `capacity_bytes = 1024
  source_checksum = "` + sum + `"`, `source_checksum without an upload.*set source_url or source_file`},
		{"format enum", `capacity_bytes = 1024
  format = "vmdk"`, `Attribute format value must be one of: \["qcow2" "raw" "iso"\], got: "vmdk"`},
		{"capacity positive", `capacity_bytes = 0`, `Attribute capacity_bytes value must be at least 1, got: 0`},
		{"qcow2 capacity in sectors", `capacity_bytes = 1000001`, `capacity_bytes not a whole number of sectors.*capacity_bytes = 1000001 is not a multiple of 512.*Use 1000448`},
		{"empty volume needs size", ``, `Missing capacity_bytes.*set capacity_bytes`},
		{"overlay must be qcow2", `backing_volume = "default/base"
  format = "raw"`, `Overlay volumes are qcow2.*remove format or set it to "qcow2"`},
		{"url scheme", `source_url = "ftp://host/a.qcow2"`, `Invalid source_url.*scheme "ftp" is not supported; use an http://,\s+https:// or file:// URL`},
		{"bad volume id", `clone_from = "bad\nid"`, `Invalid volume id.*clone_from.*contains control characters.*expected\s+the\s+volume's\s+key`},
		{"empty volume id", `backing_volume = ""`, `Invalid volume id.*backing_volume.*volume id is empty`},
		{"encrypted overlay", `backing_volume = "default/base"
  encryption = { format = "luks", secret_id = "0b8e7f2c-1d3a-4b5c-9e6f-7a8b9c0d1e2f" }`, `Encryption with backing_volume.*not with backing_volume \(an encrypted overlay would need its backing chain's keys.*clone_from = that volume's id`},
		{"encrypted iso", `capacity_bytes = 1048576
  format = "iso"
  encryption = { format = "luks", secret_id = "0b8e7f2c-1d3a-4b5c-9e6f-7a8b9c0d1e2f" }`, `Encrypted volumes are raw or qcow2.*format = "iso" cannot be encrypted`},
		{"encryption secret id", `capacity_bytes = 1048576
  encryption = { format = "luks", secret_id = "my-secret" }`, `Invalid Attribute Value Match.*encryption.secret_id.*must be a libvirt secret's UUID`},
		{"missing source file", `source_file = "/nonexistent/tfacc.qcow2"`, `Unreadable source_file.*no such file or directory.*source_file is a path on\s+the machine running Terraform`},
	})
}

// Any key is a volume id: LVM keys are UUIDs, rbd keys <ceph pool>/<image>, iSCSI keys
// LUN ids. Plan-time validation accepts them all (the key is tried first at apply time).
func TestVolume_validationKeys(t *testing.T) {
	for _, id := range []string{"Hd4Bq2-7cTv-Q2e4-Ls1x-9kO3-aWw1-ZpY7m3", "ceph-pool/image-1", "/dev/vg0/lv0",
		"ip-192.0.2.1:3260-iscsi-iqn.2024-01.example:t-lun-1", "a/b/c"} {
		acctest.RunUnit(t, resource.TestCase{
			Steps: []resource.TestStep{{
				Config: acctest.ProviderBlock("") + fmt.Sprintf(`
resource "libvirt_volume" "v" {
  name       = "tfacc-v"
  pool       = "default"
  clone_from = %q
}
resource "libvirt_volume_export" "e" {
  volume_id = %q
  path      = "e.qcow2"
}
`, id, id),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			}},
		})
	}
}

func TestVolume_validationNames(t *testing.T) {
	var cases []planCase
	for name, want := range map[string]string{
		"":          `Invalid volume name.*name must not be empty`,
		"a/b":       `Invalid volume name.*name "a/b" contains '/'.*Use e.g. "a-b"`,
		"bad\nname": `Invalid volume name.*control characters`,
	} {
		cases = append(cases, planCase{fmt.Sprintf("%q", name), attr("name", name), want})
	}
	expectPlanErrors(t, "resource \"libvirt_volume\" \"v\" {\n  %s\n  pool = \"default\"\n  capacity_bytes = 1024\n}\n", cases)
}
