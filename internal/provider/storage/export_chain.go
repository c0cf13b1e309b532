package storage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/kvmforge/terraform-provider-libvirt/internal/export"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/qcow2"
)

// The chain of an incremental export: its files, named after `path`, and the libvirt
// checkpoints that mark their copy points.

// exportLink is one element of `chain`.
type exportLink struct {
	Path        types.String `tfsdk:"path"`
	Checkpoint  types.String `tfsdk:"checkpoint"`
	DomainUUID  types.String `tfsdk:"domain_uuid"`
	Incremental types.Bool   `tfsdk:"incremental"`
	SizeBytes   types.Int64  `tfsdk:"size_bytes"`
	SHA256      types.String `tfsdk:"sha256"`
	Created     types.String `tfsdk:"created"`
}

var linkObjectType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"path": types.StringType, "checkpoint": types.StringType, "domain_uuid": types.StringType, "incremental": types.BoolType,
	"size_bytes": types.Int64Type, "sha256": types.StringType, "created": types.StringType,
}}

// linkPath is the file of link n of the chain that starts at path: path itself for the
// first, else `.n` inserted before a `.qcow2` suffix, or appended when there is none.
func linkPath(path string, n int) string {
	if n == 0 {
		return path
	}
	if stem, ok := strings.CutSuffix(path, ".qcow2"); ok {
		return fmt.Sprintf("%s.%d.qcow2", stem, n)
	}
	return fmt.Sprintf("%s.%d", path, n)
}

// checkpointPrefix names the checkpoints of the chain at path: derived from the path, so
// that a new chain at the same path (after the state lost the old one) finds and removes
// the old one's leftovers, and two chains of one disk never share a name.
func checkpointPrefix(path string) string {
	h := sha256.Sum256([]byte(path))
	return "tfexport-" + hex.EncodeToString(h[:6]) + "-"
}

func (m *VolumeExportModel) links(ctx context.Context, d *diag.Diagnostics) []exportLink {
	var out []exportLink
	if !m.Chain.IsNull() && !m.Chain.IsUnknown() {
		d.Append(m.Chain.ElementsAs(ctx, &out, false)...)
	}
	return out
}

// setLinks stores the chain and makes the newest link the resource's file.
func (m *VolumeExportModel) setLinks(ctx context.Context, links []exportLink, d *diag.Diagnostics) {
	v, diags := types.ListValueFrom(ctx, linkObjectType, links)
	d.Append(diags...)
	m.Chain = v
	last := links[len(links)-1]
	m.ID, m.SizeBytes, m.SHA256 = last.Path, last.SizeBytes, last.SHA256
}

// createChain is the Create of an incremental export: a full copy with the first
// checkpoint. Checkpoints of an earlier chain at this path that the state no longer
// knows are removed (their bitmaps would otherwise stay in the disk for good). A failure
// is headed by what was asked, not the file, as for a plain export: nothing was made.
func (r *VolumeExportResource) createChain(ctx context.Context, plan *VolumeExportModel, p privateState, d *diag.Diagnostics) (*VolumeExportModel, error) {
	dest, err := filepath.Abs(plan.Path.ValueString())
	if err != nil {
		return nil, fmt.Errorf("path %q: %w", plan.Path.ValueString(), err)
	}
	link, err := r.exportLink(ctx, plan, dest, 0, nil, d)
	if err != nil {
		d.AddError("Unable to export volume "+plan.VolumeID.ValueString(), err.Error())
		return nil, nil
	}
	// Best effort: the export is made; what is left is named in a warning.
	old, err := r.Client.Checkpoints(ctx, link.DomainUUID.ValueString(), checkpointPrefix(dest))
	var stale []string
	for _, n := range old {
		if n != link.Checkpoint.ValueString() {
			stale = append(stale, n)
		}
	}
	if err == nil && len(stale) > 0 {
		_, err = r.Client.DeleteCheckpoints(ctx, link.DomainUUID.ValueString(), stale)
	}
	if err != nil {
		d.AddWarning("Old checkpoints may be left", fmt.Sprintf("Checkpoints of an earlier export chain at %s (%v) could not be "+
			"listed or removed: %v. List them with `virsh checkpoint-list %s`.", dest, stale, err, link.DomainUUID.ValueString()))
	}
	plan.setLinks(ctx, []exportLink{*link}, d)
	d.Append(stampLink(ctx, p, link)...)
	return plan, nil
}

// nextLink is the Update of an incremental export whose triggers changed: the changes
// since the newest link's checkpoint, backed by its file, or a full copy (with a warning)
// when that checkpoint is gone.
func (r *VolumeExportResource) nextLink(ctx context.Context, plan, state *VolumeExportModel, p privateState, d *diag.Diagnostics) (*VolumeExportModel, error) {
	links := state.links(ctx, d)
	if d.HasError() {
		return nil, nil
	}
	dest, err := filepath.Abs(plan.Path.ValueString())
	if err != nil {
		return nil, fmt.Errorf("path %q: %w", plan.Path.ValueString(), err)
	}
	var prev *exportLink
	if len(links) > 0 {
		prev = &links[len(links)-1]
	}
	link, err := r.exportLink(ctx, plan, dest, len(links), prev, d)
	if err != nil {
		return nil, err
	}
	plan.setLinks(ctx, append(links, *link), d)
	d.Append(stampLink(ctx, p, link)...)
	return plan, nil
}

// stampLink records the newest link's size and mtime, as a plain export records its file.
func stampLink(ctx context.Context, p privateState, l *exportLink) diag.Diagnostics {
	st, err := export.StampOf(l.Path.ValueString())
	if err != nil {
		var d diag.Diagnostics
		d.AddError("Unable to record the exported file", err.Error())
		return d
	}
	return setStamp(ctx, p, st)
}

// linkBackend is what writing a link asks of libvirt (*libvirt.Client; a fake in tests).
type linkBackend interface {
	BackupVolume(ctx context.Context, ref libvirt.VolumeRef, opts libvirt.BackupOptions) (*libvirt.BackupResult, error)
	DropCheckpoint(ctx context.Context, domain, name string) error
}

func (r *VolumeExportResource) exportLink(ctx context.Context, plan *VolumeExportModel, dest string, n int, prev *exportLink, d *diag.Diagnostics) (*exportLink, error) {
	return writeLink(ctx, r.Client, plan, dest, n, prev, d)
}

// writeLink writes link n of the chain at dest: incremental since prev's checkpoint,
// backed by prev's file, when prev is set and its checkpoint still exists; a full copy
// otherwise. When the file cannot be finished after libvirt made the link's checkpoint
// (the backing header, the sync or rename, the temporary volume's removal), the
// checkpoint is deleted again (unfinishedLink): it marks a copy point no file holds, and
// the next export must start from the last good one.
func writeLink(ctx context.Context, be linkBackend, plan *VolumeExportModel, dest string, n int, prev *exportLink, d *diag.Diagnostics) (*exportLink, error) {
	volID := plan.VolumeID.ValueString()
	ref, err := libvirt.ParseVolumeRef(volID)
	if err != nil {
		return nil, err
	}
	file := linkPath(dest, n)
	f, err := export.Create(file, export.Options{Compression: export.None, Progress: func(in, _ int64, rate float64) {
		tflog.Info(ctx, fmt.Sprintf("exporting volume %s to %s: %s, %s/s", volID, file, libvirt.FormatBytes(float64(in)), libvirt.FormatBytes(rate)))
	}})
	if err != nil {
		return nil, err
	}
	opts := libvirt.BackupOptions{Checkpoint: fmt.Sprintf("%s%d", checkpointPrefix(dest), n), Quiesce: plan.Quiesce.ValueBool(),
		Log: func(msg string, f map[string]any) { tflog.Info(ctx, msg, f) }}
	if prev != nil {
		opts.Since = prev.Checkpoint.ValueString()
	}
	var bw *qcow2.BackingWriter
	opts.Open = func(incremental bool) (io.Writer, error) {
		if !incremental {
			return f, nil
		}
		bw = qcow2.NewBackingWriter(f, prev.Path.ValueString(), "qcow2")
		return bw, nil
	}
	taken := time.Now().UTC()
	res, err := be.BackupVolume(ctx, ref, opts)
	if err == nil && bw != nil {
		err = bw.Close()
	}
	if err != nil {
		_ = f.Abort()
		// BackupVolume removes the checkpoint of a copy it failed; a result with an error
		// (or an error after it) is a copy made whose file is not.
		err = unfinishedLink(ctx, be, res, opts.Checkpoint, err)
		if prev != nil {
			// The previous checkpoint stays the base of the next try.
			err = fmt.Errorf("%w (the chain is unchanged: the next apply tries link %d again)", err, n)
		}
		return nil, tfkit.Sentence("%w\n\nNothing was written to %s (the partial file %s was removed).", err, file, f.Partial())
	}
	out, err := f.Commit()
	if err != nil {
		err = unfinishedLink(ctx, be, res, opts.Checkpoint, err)
		if prev != nil {
			err = fmt.Errorf("%w (the chain is unchanged: the next apply tries link %d again)", err, n)
		}
		return nil, err
	}
	if res.Restarted != "" {
		d.AddWarning("Incremental export restarted with a full copy",
			fmt.Sprintf("%s, so %s is a full copy of volume %s without backing file: a new chain starts there (older links stay as they are).",
				res.Restarted, file, volID))
	}
	tflog.Info(ctx, fmt.Sprintf("exported volume %s to %s: %s (%s), backup job %s, total %s", volID, file, libvirt.FormatBytes(float64(out.Size)),
		map[bool]string{true: "incremental", false: "full"}[res.Incremental], res.Job.Round(time.Millisecond), out.Elapsed.Round(time.Millisecond)),
		map[string]any{"domain": res.DomainName, "disk": res.Disk, "checkpoint": opts.Checkpoint, "bytes_written": out.Size, "sha256": out.SHA256})
	return &exportLink{
		Path: types.StringValue(file), Checkpoint: types.StringValue(opts.Checkpoint), DomainUUID: types.StringValue(res.DomainUUID),
		Incremental: types.BoolValue(res.Incremental), SizeBytes: types.Int64Value(out.Size), SHA256: types.StringValue(out.SHA256),
		Created: types.StringValue(taken.Format(time.RFC3339)),
	}, nil
}

// unfinishedLink deletes the checkpoint of a copy libvirt made (res set) whose file could
// not be finished (err), and says so in the error; res nil: nothing to undo.
func unfinishedLink(ctx context.Context, be linkBackend, res *libvirt.BackupResult, checkpoint string, err error) error {
	if res == nil || res.DomainUUID == "" {
		return err
	}
	if derr := be.DropCheckpoint(ctx, res.DomainUUID, checkpoint); derr != nil {
		return fmt.Errorf("%w; and checkpoint %s of domain %s, which marks this copy, could not be removed (%v): "+
			"remove it with `virsh checkpoint-delete %s %s` (the next try of this link makes a checkpoint of that name again)",
			err, checkpoint, res.DomainName, derr, res.DomainName, checkpoint)
	}
	return fmt.Errorf("%w (checkpoint %s of this copy was removed again)", err, checkpoint)
}

// readChain is the Read of an incremental export: every file of the chain must still be
// there with its size (the newest also with its mtime); else the chain cannot be restored
// and the resource is removed from state, so that the next apply starts a new one (whose
// Create removes this one's checkpoints). Checkpoints are not looked at: a missing one
// only makes the next link full (Update warns).
func readChain(ctx context.Context, m *VolumeExportModel, recorded *export.Stamp) (*VolumeExportModel, error) {
	var d diag.Diagnostics
	links := m.links(ctx, &d)
	if d.HasError() {
		return nil, fmt.Errorf("chain in state: %v", d)
	}
	for i, l := range links {
		stamp := recorded
		if i < len(links)-1 {
			stamp = nil
		}
		why, err := exportChanged(l.Path.ValueString(), l.SizeBytes.ValueInt64(), stamp)
		switch {
		case err != nil:
			return nil, err
		case why != "":
			return nil, tfkit.Gone("link %d of the chain, %s, changed outside Terraform (%s): a new chain is exported", i, l.Path.ValueString(), why)
		}
	}
	return m, nil
}

// deleteChain is the Delete of an incremental export: its checkpoints are removed from
// the domains that hold them (a domain that is gone: nothing to do; any other failure
// keeps the resource), and with remove_on_destroy its files, except those changed since.
func (r *VolumeExportResource) deleteChain(ctx context.Context, m *VolumeExportModel, recorded *export.Stamp, d *diag.Diagnostics) error {
	links := m.links(ctx, d)
	byDomain := map[string][]string{}
	for _, l := range links {
		byDomain[l.DomainUUID.ValueString()] = append(byDomain[l.DomainUUID.ValueString()], l.Checkpoint.ValueString())
	}
	for dom, names := range byDomain {
		notes, err := r.Client.DeleteCheckpoints(ctx, dom, names)
		if err != nil {
			return err
		}
		for _, n := range notes {
			d.AddWarning("Checkpoint bitmap left in the disk image", n)
		}
	}
	if !m.RemoveOnDestroy.ValueBool() {
		return nil
	}
	for i := len(links) - 1; i >= 0; i-- {
		p, stamp := links[i].Path.ValueString(), recorded
		if i < len(links)-1 {
			stamp = nil
		}
		why, err := exportChanged(p, links[i].SizeBytes.ValueInt64(), stamp)
		switch {
		case err != nil:
			return err
		case why == "the file is gone":
			continue
		case why != "":
			d.AddWarning("Exported file left in place",
				fmt.Sprintf("remove_on_destroy is set, but %s is not the file this export wrote (%s), so it was not deleted.", p, why))
			continue
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}
