package storage

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// storedVolume is the part of a model that names the volume an object lives in: a
// libvirt_volume, and the content that libvirt_cloudinit_iso and libvirt_ignition store
// in one. Embedded in their models.
type storedVolume struct {
	ID   types.String `tfsdk:"id"`
	Name types.String `tfsdk:"name"`
	Pool types.String `tfsdk:"pool"`
	Path types.String `tfsdk:"path"`
}

// ref is how a volume in state is looked up: by its key, in its pool. The pool only tells
// "gone" from "in a stopped pool" (libvirt finds keys in running pools only); there is no
// fallback by name, so that a volume made anew under the same name (a new key) is never
// taken for this one.
func (v *storedVolume) ref() libvirt.VolumeRef {
	return libvirt.VolumeRef{Key: v.ID.ValueString(), Pool: v.Pool.ValueString()}
}

// volume is the stored volume of a model that embeds it.
func (v *storedVolume) volume() *storedVolume { return v }

// fullName is <pool>/<name>, for messages.
func (v *storedVolume) fullName() string { return v.Pool.ValueString() + "/" + v.Name.ValueString() }

func (v *storedVolume) fromInfo(info *libvirt.VolumeInfo) {
	v.ID = types.StringValue(info.Key)
	v.Name = types.StringValue(info.Name)
	v.Pool = types.StringValue(info.Pool)
	v.Path = types.StringValue(info.Path)
}

// poolStoppedNote adds to a failed delete of a volume whose pool is stopped that nothing
// was deleted and what to do.
func poolStoppedNote(err error) string {
	if !libvirt.IsPoolInactive(err) {
		return ""
	}
	return "\n\nNothing was deleted, and the resource stays in state: start the pool, then destroy again."
}

// deleteVolume deletes the volume v names; the error says what to do when its pool is
// stopped.
func deleteVolume(ctx context.Context, c *libvirt.Client, v *storedVolume) error {
	if err := c.DeleteVolume(ctx, v.ref()); err != nil {
		return fmt.Errorf("%w%s", err, poolStoppedNote(err))
	}
	return nil
}

// storedModel is the model of a resource that lives in one volume.
type storedModel[M any] interface {
	tfkit.Timed[M]
	what() string
	volume() *storedVolume
}

// blobModel is the model of a stored blob: it knows its kind, builds its content from
// the plan (itself, which it may complete) and the configuration (only that holds
// write-only values), and holds the content's digest.
type blobModel[M any] interface {
	storedModel[M]
	kind() blobKind
	content(config *M) ([]byte, error)
	digest() *types.String
}

// deleteStored is the Delete of a resource that lives in one volume.
func deleteStored[M any, P storedModel[M]](ctx context.Context, c *libvirt.Client, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	tfkit.Remove(ctx, req, resp, 5*time.Minute, P.what, func(ctx context.Context, m P, _ *diag.Diagnostics) error {
		return deleteVolume(ctx, c, m.volume())
	})
}

// blobResource is the CRUD of a stored blob of kind (libvirt_ignition,
// libvirt_cloudinit_iso), embedded in its resource: create stores the content (see
// its Create, below); read looks at the volume, not its content; every attribute but
// timeouts replaces it; delete deletes the volume.
type blobResource[M any, P blobModel[M]] struct {
	tfkit.ResourceBase
}

// kind is the kind of blob the resource stores, as its model says.
func (r *blobResource[M, P]) kind() blobKind {
	var m M
	return P(&m).kind()
}

func (r *blobResource[M, P]) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	tfkit.Refresh(ctx, req, resp, 2*time.Minute, P.what, func(ctx context.Context, m P) (P, error) {
		return m, m.kind().look(ctx, r.Client, m.volume())
	})
}

// Update only ever changes timeouts: every other attribute replaces the blob.
func (r *blobResource[M, P]) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	tfkit.StorePlan[M](ctx, req, resp)
}

func (r *blobResource[M, P]) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	deleteStored[M, P](ctx, r.Client, req, resp)
}

// blobKind is content the provider builds and stores byte for byte in a raw volume: a
// cloud-init seed, an ignition config. Creating, reading, deleting and importing one is
// the same for both.
type blobKind struct {
	typeName string // libvirt_ignition
	noun     string // "ignition config"
	article  string // "an"
	max      uint64 // what an import downloads at most
}

var (
	seedBlob     = blobKind{typeName: "libvirt_cloudinit_iso", noun: "cloud-init seed", article: "a", max: 64 << 20}
	ignitionBlob = blobKind{typeName: "libvirt_ignition", noun: "ignition config", article: "an", max: 16 << 20}
)

// what names a stored blob in messages: "ignition config default/node-1.ign".
func (k blobKind) what(v *storedVolume) string { return k.noun + " " + v.fullName() }

// store uploads content as the raw volume v names (pool and name as planned) and fills v
// from the volume made.
func (k blobKind) store(ctx context.Context, c *libvirt.Client, v *storedVolume, content []byte) error {
	spec := libvirt.VolumeSpec{Pool: v.Pool.ValueString(), Name: v.Name.ValueString(), Format: "raw"}
	info, err := c.UploadBytes(ctx, spec, k.noun, content)
	if err != nil {
		return err
	}
	tflog.Info(ctx, "stored "+k.noun, map[string]any{"volume": spec.String(), "bytes": len(content), "sha256": sha256Hex(content)})
	v.fromInfo(info)
	return nil
}

// look refreshes v from libvirt, in its pool (see ref).
func (k blobKind) look(ctx context.Context, c *libvirt.Client, v *storedVolume) error {
	info, err := c.VolumeInfo(ctx, v.ref())
	if err != nil {
		return err
	}
	v.fromInfo(info)
	return nil
}

// importState is the ImportState of a stored blob: the id is <pool>/<name> or the volume
// key; the content is downloaded (a bounded size) and made into the state by toState,
// which says what is wrong with it in its error (and may add warnings to d).
func (k blobKind) importState(ctx context.Context, c *libvirt.Client, req resource.ImportStateRequest, resp *resource.ImportStateResponse,
	toState func(v storedVolume, content []byte, d *diag.Diagnostics) (any, error)) {
	ctx, bound := tfkit.ImportContext(ctx, c, k.typeName, req.ID)
	defer bound.End(&resp.Diagnostics)
	ref, err := libvirt.ParseVolumeRef(req.ID)
	if err != nil {
		resp.Diagnostics.AddError("Invalid import id for "+k.typeName, err.Error())
		return
	}
	summary := "Unable to import " + k.noun + " " + ref.String()
	info, err := c.VolumeInfo(ctx, ref)
	if err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	if info.Capacity > k.max {
		resp.Diagnostics.AddError(summary, fmt.Sprintf("the volume is %d bytes: too large for %s %s", info.Capacity, k.article, k.noun))
		return
	}
	var buf bytes.Buffer
	if err := c.DownloadVolume(ctx, libvirt.VolumeRef{Key: info.Key}, &buf); err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	var v storedVolume
	v.fromInfo(info)
	m, err := toState(v, buf.Bytes(), &resp.Diagnostics)
	if err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, m)...)
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// storedVolumeAttributes adds to attrs those of the volume an object lives in (what a
// model's storedVolume holds): id, name, pool (a change of either replaces it) and path.
func storedVolumeAttributes(nameDesc, poolDesc, pathDesc string, attrs map[string]schema.Attribute) map[string]schema.Attribute {
	attrs["id"] = tfkit.IDAttribute("The volume's key (for directory pools, its path on the host).")
	attrs["name"] = tfkit.ObjectNameAttribute(nameDesc, "volume name")
	attrs["pool"] = tfkit.ObjectNameAttribute(poolDesc, "pool name")
	attrs["path"] = tfkit.KeptString(pathDesc)
	return attrs
}

// Create stores the content the model builds and records its sha256.
func (r *blobResource[M, P]) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var config M // only the configuration holds the write-only contents
	resp.Diagnostics.Append(tfkit.GetConfig(ctx, req.Config, &config)...)
	tfkit.Create(ctx, req, resp, 5*time.Minute, P.what, func(ctx context.Context, plan P, _ *diag.Diagnostics) (P, error) {
		content, err := plan.content(&config)
		if err != nil {
			return nil, err
		}
		if err := r.kind().store(ctx, r.Client, plan.volume(), content); err != nil {
			return nil, err
		}
		*plan.digest() = types.StringValue(sha256Hex(content))
		return plan, nil
	})
}
