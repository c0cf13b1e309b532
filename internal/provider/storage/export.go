package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/kvmforge/terraform-provider-libvirt/internal/export"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit/validators"
)

// exportStampKey is the private-state key of the written file's size and mtime.
const exportStampKey = "file"

type VolumeExportResource struct {
	tfkit.ActionResource[VolumeExportModel]
}

func (r *VolumeExportResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = withIncremental(tfkit.ActionSchema{
		Description: "Downloads a volume into a file on the machine running Terraform, as `qcow2` or `raw`, " +
			"optionally compressed (`gzip`, `zstd`). The bytes are streamed — never held whole in memory, and nothing " +
			"is written locally but the destination (as `<name>.<random>.partial` next to it, renamed at the end; removed " +
			"when the export fails). Progress is logged every 5 s (bytes and rate; `TF_LOG=info`).\n\n" +
			"The export happens once, when the resource is created. Changing `volume_id`, `path`, `format`, " +
			"`compression` or `triggers` exports again (replace); a later change of the volume itself does not — " +
			"put something into `triggers` for that. Destroying the resource removes nothing on the libvirt host and " +
			"leaves the file in place unless `remove_on_destroy` is true. `timeouts.create` defaults to `30m`.",
		ID: "Absolute path of the exported file.",
		Triggers: "Arbitrary values; any change exports again (replace), e.g. " +
			"`{ snapshot = libvirt_snapshot.before_upgrade.id }`.",
		Attributes: map[string]schema.Attribute{
			"volume_id": tfkit.RequiredReplace("The volume to export: its key (`libvirt_volume.id`, for directory pools its path) or "+
				"`<pool>/<name>`. Changing it exports again.", validators.VolumeRef()),
			"path": tfkit.RequiredReplace("File to write, on the machine running Terraform: absolute, or relative to the directory "+
				"Terraform runs in. Its directory must exist (checked at plan time); an existing file is replaced "+
				"when the export succeeds, and kept when it fails. Written with mode `0600`. No suffix is added for "+
				"the compression (name it e.g. `disk.qcow2.zst`). Changing it exports again.", validators.ExportPath()),
			"format": tfkit.DefaultReplace("Image format of the file: `qcow2` (default) or `raw`. When it differs from the volume's "+
				"format, or the volume is a copy-on-write overlay, the volume is converted on the libvirt host into a "+
				"temporary volume in its pool (libvirt's create-from, i.e. `qemu-img convert`), which is downloaded and "+
				"removed again — also when the export fails or is interrupted; the pool needs room for it. A disk of a "+
				"running domain is copied through that domain instead (a block copy job into the temporary volume: a "+
				"point-in-time, crash-consistent copy; the guest keeps running). The file is "+
				"always a standalone image (an overlay's backing chain is flattened). Changing it exports again.",
				"qcow2", stringvalidator.OneOf("qcow2", "raw")),
			"compression": tfkit.DefaultReplace("Compression of the file: `none` (default), `gzip` or `zstd` (default levels). Done on "+
				"the machine running Terraform while the bytes arrive; `size_bytes` and `sha256` are of the compressed "+
				"file. A raw export of a mostly empty disk compresses to little. Changing it exports again.",
				export.None, stringvalidator.OneOf(export.Compressions...)),
			"remove_on_destroy": tfkit.OptionalBool("Delete the file when the resource is destroyed (default `false`: the file stays). "+
				"A file that was changed since the export (other size or modification time) is left in place with a "+
				"warning. Changing it is an in-place update: nothing is exported again.", false),
			"quiesce":    tfkit.AddedBoolReplace(quiesceExportDescription),
			"size_bytes": tfkit.KeptInt("Bytes written to the file (after compression)."),
			"sha256":     tfkit.KeptString("SHA-256 of the file as written (hex), computed while streaming; compare with `sha256sum <path>`."),
		},
	}.Schema(ctx))
}

const quiesceExportDescription = "Freeze the guest's filesystems for the instant the copy is taken, so the file " +
	"holds them as if cleanly unmounted (pending writes flushed), not crash-consistent. Default `false`. Only " +
	"a disk of a running domain is frozen: through the QEMU guest agent (`virDomainFSFreeze`), for the end of " +
	"the block copy job only (well under a second), and always thawed again, also when the export fails. The " +
	"guest must run `qemu-guest-agent` and the domain needs the agent channel (`org.qemu.guest_agent.0`, " +
	"`libvirt_domain`'s `devices.qemu_agent`, on by default); an agent that is missing or does not answer fails the export with an " +
	"error saying so, and nothing is left behind (no temporary volume, no file) — never a silent unquiesced " +
	"copy. A volume no running domain has open is not written to, so its copy is consistent without freezing: " +
	"`quiesce = true` then exports as usual, with no warning. Changing it exports again."

// exportTimeout is the default of timeouts.create.
const exportTimeout = 30 * time.Minute

type VolumeExportModel struct {
	tfkit.ActionModel
	VolumeID        types.String `tfsdk:"volume_id"`
	Path            types.String `tfsdk:"path"`
	Format          types.String `tfsdk:"format"`
	Compression     types.String `tfsdk:"compression"`
	RemoveOnDestroy types.Bool   `tfsdk:"remove_on_destroy"`
	Quiesce         types.Bool   `tfsdk:"quiesce"`
	SizeBytes       types.Int64  `tfsdk:"size_bytes"`
	SHA256          types.String `tfsdk:"sha256"`
	Incremental     types.Bool   `tfsdk:"incremental"` // export_incremental.go
	Chain           types.List   `tfsdk:"chain"`
}

func (m *VolumeExportModel) what() string { return "exported file " + m.ID.ValueString() }

func (r *VolumeExportResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	tfkit.Create(ctx, req, resp, exportTimeout, (*VolumeExportModel).what, func(ctx context.Context, plan *VolumeExportModel, d *diag.Diagnostics) (*VolumeExportModel, error) {
		volID := plan.VolumeID.ValueString()
		if plan.Incremental.ValueBool() {
			return r.createChain(ctx, plan, resp.Private, d)
		}
		out, err := r.export(ctx, plan)
		if err != nil {
			// Headed by what was asked, not the file: it was not made.
			d.AddError("Unable to export volume "+volID, err.Error())
			return nil, nil
		}
		plan.ID = types.StringValue(out.Path)
		plan.Chain = types.ListNull(linkObjectType) // a plain export has none, also when incremental was unknown at plan time
		plan.SizeBytes = types.Int64Value(out.Size)
		plan.SHA256 = types.StringValue(out.SHA256)
		d.Append(setStamp(ctx, resp.Private, export.Stamp{Size: out.Size, ModTime: out.ModTime.UnixNano()})...)
		return plan, nil
	})
}

// export streams the volume into the file the plan names and returns what was written.
func (r *VolumeExportResource) export(ctx context.Context, plan *VolumeExportModel) (*export.Result, error) {
	volID, format, comp := plan.VolumeID.ValueString(), plan.Format.ValueString(), plan.Compression.ValueString()
	ref, err := libvirt.ParseVolumeRef(volID)
	if err != nil {
		return nil, err
	}
	dest, err := filepath.Abs(plan.Path.ValueString())
	if err != nil {
		return nil, fmt.Errorf("path %q: %w", plan.Path.ValueString(), err)
	}
	f, err := export.Create(dest, export.Options{
		Compression: comp,
		Progress: func(in, out int64, rate float64) {
			tflog.Info(ctx, fmt.Sprintf("exporting volume %s to %s: %s read, %s written, %s/s", volID, dest,
				libvirt.FormatBytes(float64(in)), libvirt.FormatBytes(float64(out)), libvirt.FormatBytes(rate)),
				map[string]any{"volume": volID, "path": dest, "bytes": in, "bytes_written": out, "bytes_per_second": int64(rate)})
		},
	})
	if err != nil {
		return nil, err
	}
	tflog.Info(ctx, "exporting volume", map[string]any{"volume": volID, "path": dest, "format": format, "compression": comp})
	res, err := r.Client.ExportVolume(ctx, ref, format, f, libvirt.ExportOptions{
		Log:     func(msg string, f map[string]any) { tflog.Info(ctx, msg, f) },
		Quiesce: plan.Quiesce.ValueBool(),
	})
	if err != nil {
		_ = f.Abort()
		if ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded) {
			timeout, _ := plan.Timeouts.Create(ctx, exportTimeout)
			err = fmt.Errorf("%w: the export did not finish within the create timeout (%s); raise timeouts.create", err, timeout)
		}
		return nil, tfkit.Sentence("%w\n\nNothing was written to %s (the partial file %s was removed).", err, dest, f.Partial())
	}
	out, err := f.Commit()
	if err != nil {
		return nil, err
	}
	rate := 0.0
	if s := out.Elapsed.Seconds(); s > 0 {
		rate = float64(out.In) / s
	}
	tflog.Info(ctx, fmt.Sprintf("exported volume %s to %s: %s in %s (%s/s)", volID, dest, libvirt.FormatBytes(float64(out.Size)),
		out.Elapsed.Round(time.Millisecond), libvirt.FormatBytes(rate)), map[string]any{
		"method": res.Method, "domain": res.Domain, "temporary_volume": res.TempVolume, "volume_bytes": out.In,
		"bytes_written": out.Size, "sha256": out.SHA256, "bytes_per_second": int64(rate), "quiesced": res.Quiesced,
	})
	return out, nil
}

// privateState is the part of the framework's private state this resource uses.
type privateState interface {
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
}

func setStamp(ctx context.Context, p privateState, s export.Stamp) diag.Diagnostics {
	b, err := json.Marshal(s)
	if err != nil {
		var d diag.Diagnostics
		d.AddError("Unable to record the exported file", err.Error())
		return d
	}
	return p.SetKey(ctx, exportStampKey, b)
}

// getStamp is the recorded size and mtime, nil when none was recorded.
func getStamp(ctx context.Context, p interface {
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
}) *export.Stamp {
	b, diags := p.GetKey(ctx, exportStampKey)
	if diags.HasError() || len(b) == 0 {
		return nil
	}
	var s export.Stamp
	if json.Unmarshal(b, &s) != nil {
		return nil
	}
	return &s
}

// exportChanged says why the file at path is no longer the one exported ("" when it is).
// Size and modification time are compared (recorded at the export); hashing a large
// file on every refresh would be too slow.
func exportChanged(path string, size int64, recorded *export.Stamp) (string, error) {
	now, err := export.StampOf(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "the file is gone", nil
	case err != nil:
		return "", err
	case now.Size != size:
		return fmt.Sprintf("the file is now %d bytes, the export wrote %d", now.Size, size), nil
	case recorded != nil && now.ModTime != recorded.ModTime:
		return fmt.Sprintf("the file was modified at %s, after the export (%s)",
			time.Unix(0, now.ModTime).UTC().Format(time.RFC3339Nano), time.Unix(0, recorded.ModTime).UTC().Format(time.RFC3339Nano)), nil
	}
	return "", nil
}

// Read looks at the file only (the export is a copy made once; the volume may change or
// go without affecting it). A file that is gone or was changed since is removed from
// state, so the next plan exports again.
func (r *VolumeExportResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	tfkit.Refresh(ctx, req, resp, time.Minute, (*VolumeExportModel).what, func(ctx context.Context, m *VolumeExportModel) (*VolumeExportModel, error) {
		if m.Incremental.ValueBool() {
			return readChain(ctx, m, getStamp(ctx, req.Private))
		}
		why, err := exportChanged(m.ID.ValueString(), m.SizeBytes.ValueInt64(), getStamp(ctx, req.Private))
		switch {
		case err != nil:
			return nil, err
		case why != "":
			return nil, tfkit.Gone("changed outside Terraform (%s): it is exported again", why)
		}
		return m, nil
	})
}

// Delete removes nothing on the libvirt host. With remove_on_destroy it deletes the file —
// unless the file is no longer the one exported (a replacement created before this
// destroy, or someone else's), which is left in place with a warning.
func (r *VolumeExportResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	tfkit.Remove(ctx, req, resp, time.Minute, (*VolumeExportModel).what, func(ctx context.Context, m *VolumeExportModel, d *diag.Diagnostics) error {
		if m.Incremental.ValueBool() {
			return r.deleteChain(ctx, m, getStamp(ctx, req.Private), d)
		}
		if !m.RemoveOnDestroy.ValueBool() {
			return nil
		}
		p := m.ID.ValueString()
		why, err := exportChanged(p, m.SizeBytes.ValueInt64(), getStamp(ctx, req.Private))
		switch {
		case err != nil:
			return err
		case why == "the file is gone":
			return nil
		case why != "":
			d.AddWarning("Exported file left in place",
				fmt.Sprintf("remove_on_destroy is set, but %s is not the file this export wrote (%s), so it was not deleted.", p, why))
			return nil
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	})
}
