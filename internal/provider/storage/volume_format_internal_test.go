package storage

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// The read rule: a volume's format is the stored one (the configuration's, or an
// import's first read), never libvirt's probe of its bytes. A probe that disagrees is a
// warning naming the volume, never a change of state (which would replace the volume).
func TestVolumeFromInfo_formatKept(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name         string
		stored       types.String
		info         libvirt.VolumeInfo
		wantFormat   string
		wantCapacity int64
		warn         bool
	}{
		{"guest wrote a qcow2 header on a raw disk", types.StringValue("raw"),
			libvirt.VolumeInfo{Format: "qcow2", Capacity: 1 << 40, Physical: 64 * mib}, "raw", 64 * mib, true},
		{"iso read as qcow2", types.StringValue("iso"),
			libvirt.VolumeInfo{Format: "qcow2", Capacity: 1 << 30, Physical: 4 * mib}, "iso", 4 * mib, true},
		{"raw stays raw", types.StringValue("raw"),
			libvirt.VolumeInfo{Format: "raw", Capacity: 64 * mib, Physical: 64 * mib}, "raw", 64 * mib, false},
		{"raw CD image called iso", types.StringValue("raw"),
			libvirt.VolumeInfo{Format: "iso", Capacity: 4 * mib, Physical: 4 * mib}, "raw", 4 * mib, false},
		{"qcow2 stays qcow2", types.StringValue("qcow2"),
			libvirt.VolumeInfo{Format: "qcow2", Capacity: 1 << 30, Physical: mib}, "qcow2", 1 << 30, false},
		{"qcow2 read as raw: kept, warned", types.StringValue("qcow2"),
			libvirt.VolumeInfo{Format: "raw", Capacity: mib, Physical: mib}, "qcow2", mib, true},
		{"no format reported", types.StringValue("qcow2"),
			libvirt.VolumeInfo{Capacity: 1 << 30}, "qcow2", 1 << 30, false},
		{"import takes libvirt's format", types.StringNull(),
			libvirt.VolumeInfo{Format: "qcow2", Capacity: 1 << 30, Physical: mib}, "qcow2", 1 << 30, false},
		{"import of a volume without format is raw", types.StringNull(),
			libvirt.VolumeInfo{Capacity: mib}, "raw", mib, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.info.Key, tc.info.Name, tc.info.Pool, tc.info.Path = "/pool/v", "v", "default", "/pool/v"
			m := VolumeModel{Format: tc.stored, AllocationBytes: types.Int64Null(), Permissions: types.ObjectNull(volumePermsTypes)}
			var d diag.Diagnostics
			m.fromInfo(&tc.info).warn(&d)
			if got := m.Format.ValueString(); got != tc.wantFormat {
				t.Errorf("format = %q, want %q", got, tc.wantFormat)
			}
			if got := m.CapacityBytes.ValueInt64(); got != tc.wantCapacity {
				t.Errorf("capacity_bytes = %d, want %d", got, tc.wantCapacity)
			}
			if d.HasError() {
				t.Fatalf("errors: %v", d)
			}
			if got := d.WarningsCount() > 0; got != tc.warn {
				t.Fatalf("warning = %v, want %v: %v", got, tc.warn, d)
			}
			if tc.warn {
				w := d.Warnings()[0]
				text := w.Summary() + " " + w.Detail()
				for _, want := range []string{"default/v", "libvirt reads volume default/v as " + tc.info.Format,
					"created " + tc.wantFormat, "keeps treating it as " + tc.wantFormat} {
					if !strings.Contains(text, want) {
						t.Errorf("warning %q does not say %q", text, want)
					}
				}
			}
		})
	}
}
