package provider_test

import "testing"

// Plan-time refusals of incremental exports: a backing file must be an uncompressed qcow2.
func TestVolumeExport_incrementalValidation(t *testing.T) {
	dir := t.TempDir()
	expectPlanErrors(t, "resource \"libvirt_volume_export\" \"x\" {\n  volume_id = \"default/a.qcow2\"\n  path = \""+dir+"/d.qcow2\"\n  incremental = true\n  %s\n}\n", []planCase{
		{"raw", `format = "raw"`, `Invalid incremental export.*incremental = true needs format = "qcow2", got "raw"`},
		{"gzip", `compression = "gzip"`, `Invalid incremental export.*needs compression = "none", got "gzip".*cannot be the backing file`},
		{"zstd", `compression = "zstd"`, `Invalid incremental export.*needs compression = "none", got "zstd"`},
	})
}
