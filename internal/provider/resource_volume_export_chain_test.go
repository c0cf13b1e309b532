package provider_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// Plan-time refusals of incremental exports: a backing file must be an uncompressed qcow2.
func TestVolumeExport_incrementalValidation(t *testing.T) {
	dir := t.TempDir()
	expectPlanErrors(t, "resource \"libvirt_volume_export\" \"x\" {\n  volume_id = \"default/a.qcow2\"\n  path = \""+dir+"/d.qcow2\"\n  incremental = true\n  %s\n}\n", []planCase{
		{"raw", `format = "raw"`, `Invalid incremental export.*incremental = true needs format = "qcow2", got "raw"`},
		{"gzip", `compression = "gzip"`, `Invalid incremental export.*needs compression = "none", got "gzip".*cannot be the backing file`},
		{"zstd", `compression = "zstd"`, `Invalid incremental export.*needs compression = "none", got "zstd"`},
	})
}

// TestAccVolumeExport_incrementalRefused: an incremental export of a volume no domain
// runs on, and of a version 2 qcow2 image (no room for bitmaps), fails with an error
// that says what to do, leaving no file and no temporary volume. The empty qcow2 a
// libvirt_volume makes is version 3, so it gets past the version check.
func TestAccVolumeExport_incrementalRefused(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("vxr")
	dir := t.TempDir()
	v2 := acctest.DataVolume(t, name+"-v2.qcow2", 1<<20, "0.10")
	vol := volumeHCL("empty", name+"-empty.qcow2", attr("capacity_bytes", 1<<20))
	exportOf := func(id string) string {
		return resourceHCL("libvirt_volume_export", "x", attr("volume_id", hcl(id)), attr("path", filepath.Join(dir, "x.qcow2")),
			attr("incremental", true))
	}
	noFiles := func(*terraform.State) error {
		if m, _ := filepath.Glob(filepath.Join(dir, "*")); len(m) > 0 {
			return fmt.Errorf("files left by a refused export: %v", m)
		}
		return checkNoExportTemps(t, name)(nil)
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.VolumesGone(name + "-empty.qcow2"),
		Steps: []resource.TestStep{
			{
				Config:      acctest.ProviderBlock("") + vol + exportOf("libvirt_volume.empty.id"),
				ExpectError: acctest.Wrapped(`Unable to export volume.*is not a disk of a running domain.*start it, or set incremental = false`),
			},
			{
				Config:      acctest.ProviderBlock("") + vol + exportOf(fmt.Sprintf("%q", v2)),
				ExpectError: acctest.Wrapped(`is a version 2 qcow2 image \(compat 0.10\).*qemu-img amend -f qcow2 -o compat=1.1`),
			},
			{Config: acctest.ProviderBlock("") + vol, Check: noFiles},
		},
	})
}
