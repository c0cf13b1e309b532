package storage

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/export"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// fakeLinks is libvirt's side of one link: the copy writes its bytes into Open's writer
// and returns res and err (after, when set, ran); DropCheckpoint is recorded.
type fakeLinks struct {
	res     *libvirt.BackupResult
	err     error
	bytes   []byte
	after   func()
	dropErr error
	since   string
	dropped []string
}

func (f *fakeLinks) BackupVolume(_ context.Context, _ libvirt.VolumeRef, opts libvirt.BackupOptions) (*libvirt.BackupResult, error) {
	f.since = opts.Since
	w, err := opts.Open(f.res != nil && f.res.Incremental)
	if err != nil {
		return nil, err
	}
	_, _ = w.Write(f.bytes) // a backing writer refuses what is not qcow2: its Close says so
	if f.after != nil {
		f.after()
	}
	return f.res, f.err
}

func (f *fakeLinks) DropCheckpoint(_ context.Context, domain, name string) error {
	f.dropped = append(f.dropped, domain+"/"+name)
	return f.dropErr
}

// TestWriteLink_dropsUnfinishedCheckpoint: when the file of a link cannot be finished
// after libvirt made its checkpoint, the checkpoint is deleted again, so the next export
// starts from the last good one; a copy that libvirt failed itself (no result) is
// libvirt's to clean up, and a good link keeps its checkpoint. No partial file is left.
func TestWriteLink_dropsUnfinishedCheckpoint(t *testing.T) {
	ok := func(incremental bool) *libvirt.BackupResult {
		return &libvirt.BackupResult{DomainUUID: "u-1", DomainName: "web", Disk: "vda", Incremental: incremental}
	}
	for _, tc := range []struct {
		name      string
		fake      fakeLinks
		blockDest bool // the link's path becomes a directory while the copy runs: the rename fails
		dropped   bool
		wantErr   string
	}{
		{name: "good link", fake: fakeLinks{res: ok(false), bytes: []byte("full copy")}},
		{name: "libvirt failed the copy", fake: fakeLinks{err: errors.New("the backup job of domain web failed")},
			wantErr: "the backup job of domain web failed (the chain is unchanged"},
		{name: "backing header not written", fake: fakeLinks{res: ok(true), bytes: []byte("not a qcow2 image")}, dropped: true,
			wantErr: "was removed again) (the chain is unchanged: the next apply tries link 1 again)"},
		{name: "temporary volume not removed", fake: fakeLinks{res: ok(false), bytes: []byte("x"), err: errors.New("remove default/tmp: busy")},
			dropped: true, wantErr: "remove default/tmp: busy (checkpoint "},
		{name: "rename fails", fake: fakeLinks{res: ok(false), bytes: []byte("full copy")}, blockDest: true, dropped: true,
			wantErr: "was removed again"},
		{name: "checkpoint cannot be removed", fake: fakeLinks{res: ok(false), bytes: []byte("x"), err: errors.New("remove default/tmp: busy"),
			dropErr: errors.New("connection lost")}, dropped: true, wantErr: "virsh checkpoint-delete web tfexport-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			dest := filepath.Join(dir, "week.qcow2")
			file := linkPath(dest, 1)
			prev := &exportLink{Path: types.StringValue(dest), Checkpoint: types.StringValue(checkpointPrefix(dest) + "0")}
			fake := tc.fake
			if tc.blockDest {
				fake.after = func() {
					if err := os.MkdirAll(filepath.Join(file, "in-the-way"), 0o700); err != nil {
						t.Fatal(err)
					}
				}
			}
			plan := &VolumeExportModel{VolumeID: types.StringValue("default/disk.qcow2"), Path: types.StringValue(dest),
				Quiesce: types.BoolValue(false)}
			var d diag.Diagnostics
			link, err := writeLink(context.Background(), &fake, plan, dest, 1, prev, &d)
			if fake.since != prev.Checkpoint.ValueString() {
				t.Errorf("copy since %q, want the previous link's checkpoint", fake.since)
			}
			want := []string(nil)
			if tc.dropped {
				want = []string{"u-1/" + checkpointPrefix(dest) + "1"}
			}
			if !slices.Equal(fake.dropped, want) {
				t.Errorf("checkpoints dropped: %v, want %v", fake.dropped, want)
			}
			if m, _ := filepath.Glob(filepath.Join(dir, "*"+export.PartialSuffix)); len(m) > 0 {
				t.Errorf("partial files left: %v", m)
			}
			if tc.wantErr == "" {
				if err != nil || link == nil || link.Checkpoint.ValueString() != checkpointPrefix(dest)+"1" {
					t.Fatalf("good link: %+v, %v", link, err)
				}
				if b, _ := os.ReadFile(file); string(b) != "full copy" {
					t.Errorf("link file = %q", b)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q in it", err, tc.wantErr)
			}
			if link != nil {
				t.Errorf("a failed link returned %+v", link)
			}
			if st, serr := os.Stat(file); serr == nil && !st.IsDir() {
				t.Errorf("a failed link left its file %s", file)
			}
		})
	}
}
