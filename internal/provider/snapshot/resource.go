package snapshot

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// Resource is an object, not an action (Read looks at it, Delete deletes it), but
// like the actions it is never changed in place.
type Resource struct {
	tfkit.ReplacedOnly[Model]
}

func (r *Resource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = tfkit.ResourceSchema(ctx, "A snapshot of a domain, taken atomically. Two internal qcow2 kinds, both of which libvirt can "+
		"revert (see `libvirt_snapshot_revert`) and delete, and a quiesced external one:\n\n"+
		"- `memory = true`: a snapshot of a **running** domain with its RAM and device state; reverting brings the "+
		"guest back running exactly where it was. Under TCG (no KVM) this takes a while: the default create timeout is 10 minutes.\n"+
		"- `memory = false` (default): a disk-only snapshot of a **shut-off** domain.\n"+
		"- `quiesce = true` (with `memory = false`) of a **running** domain: "+quiesceSnapshotSummary+"\n\n"+
		"Every writable disk of the domain must be qcow2. UEFI domains: a disk-only snapshot of a shut-off one works "+
		"but does not include its nvram varstore; a memory snapshot of a running one is refused by libvirt "+
		"(\"internal snapshots of a VM with pflash based firmware are not supported\", libvirt 9.0). See the "+
		"UEFI and snapshots guide. Any change replaces the snapshot. Destroying the domain "+
		"first is fine: the domain's delete drops its snapshots' metadata, and a snapshot whose domain is gone is "+
		"deleted without error. The snapshot's data then stays inside the qcow2 images until they are deleted; a "+
		"new domain on the same images that takes a snapshot of the same name gets a second one of that name in the "+
		"qcow2, and a revert may pick the older: keep the default timestamped names, or delete disks with their domain.",
		tfkit.NoUpdateTimeouts, map[string]schema.Attribute{
			"id":        tfkit.IDAttribute("`<domain uuid>/<snapshot name>`."),
			"domain_id": tfkit.RequiredReplace("The domain: its UUID (e.g. `libvirt_domain.x.id`) or its name.", stringvalidator.LengthAtLeast(1), stringvalidator.NoneOf("/")),
			"name": schema.StringAttribute{
				MarkdownDescription: "Snapshot name, unique per domain. Default: `tfsnap-<UTC timestamp>`.",
				Optional:            true,
				Computed:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplaceIfConfigured(), stringplanmodifier.UseStateForUnknown()},
				Validators: []validator.String{
					stringvalidator.LengthAtLeast(1),
					stringvalidator.RegexMatches(snapshotNameRegexp, "must not contain '/' or white space"),
				},
			},
			"description":   tfkit.OptionalReplace("Free text stored with the snapshot."),
			"memory":        tfkit.BoolReplace("Include the guest's RAM (the domain must be running). Default `false`: disk-only, the domain must be shut off (or running, with `quiesce = true`).", false),
			"quiesce":       tfkit.AddedBoolReplace(quiesceSnapshotDescription),
			"creation_time": tfkit.KeptString("When libvirt took the snapshot, RFC 3339 (UTC)."),
			"domain_state":  tfkit.KeptString("The domain's state recorded in the snapshot (`running`, `paused`, `shutoff`): the state a revert returns to."),
		})
}

type Model struct {
	tfkit.WithTimeouts
	tfkit.OnHost
	ID           types.String `tfsdk:"id"`
	DomainID     types.String `tfsdk:"domain_id"`
	Name         types.String `tfsdk:"name"`
	Description  types.String `tfsdk:"description"`
	Memory       types.Bool   `tfsdk:"memory"`
	Quiesce      types.Bool   `tfsdk:"quiesce"`
	CreationTime types.String `tfsdk:"creation_time"`
	DomainState  types.String `tfsdk:"domain_state"`
}

// fromSnapshot fills m from what libvirt recorded.
func (m *Model) fromSnapshot(s *libvirt.Snapshot) {
	m.ID = types.StringValue(s.DomainUUID + "/" + s.Name)
	m.Name = types.StringValue(s.Name)
	m.Description = types.StringNull()
	if s.Description != "" {
		m.Description = types.StringValue(s.Description)
	}
	m.Memory = types.BoolValue(s.Memory)
	if m.Quiesce.IsNull() || m.Quiesce.IsUnknown() {
		// After an import: quiesce is a create flag libvirt does not record. The provider
		// makes external snapshots only when quiescing, so an external one reads as true.
		m.Quiesce = types.BoolValue(len(s.Overlays) > 0)
	}
	m.CreationTime = types.StringValue(s.CreationTime.Format(time.RFC3339))
	m.DomainState = types.StringValue(s.State)
}

// snapshotRef is the domain and snapshot name a state entry points at: the domain UUID
// from the id once known (a domain renamed later is still found), else domain_id.
func (m *Model) snapshotRef() (domain, name string) {
	if d, n, ok := strings.Cut(m.ID.ValueString(), "/"); ok && d != "" && n != "" {
		return d, n
	}
	return m.DomainID.ValueString(), m.Name.ValueString()
}

func (m *Model) what() string {
	domain, name := m.snapshotRef()
	return fmt.Sprintf("snapshot %s of domain %s", name, domain)
}

func (r *Resource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	tfkit.Create(ctx, req, resp, 10*time.Minute, (*Model).what, func(ctx context.Context, plan *Model, _ *diag.Diagnostics) (*Model, error) {
		if plan.Name.IsUnknown() || plan.Name.IsNull() || plan.Name.ValueString() == "" {
			plan.Name = types.StringValue("tfsnap-" + time.Now().UTC().Format("20060102-150405"))
		}
		domain := plan.DomainID.ValueString()
		s, err := r.Client.CreateSnapshot(ctx, domain, libvirt.SnapshotSpec{
			Name:        plan.Name.ValueString(),
			Description: plan.Description.ValueString(),
			Memory:      plan.Memory.ValueBool(),
			Quiesce:     plan.Quiesce.ValueBool(),
		})
		if s != nil {
			// Taken, with an error (a quiesced one whose guest did not thaw): kept in
			// state, tainted, so that the next apply replaces it.
			plan.fromSnapshot(s)
			return plan, err
		}
		switch {
		case errors.Is(err, libvirt.ErrGuestAgent):
			return nil, tfkit.AtAttribute(path.Root("quiesce"), err)
		case errors.Is(err, libvirt.ErrSnapshotState):
			return nil, tfkit.AtAttribute(path.Root("memory"), err)
		case errors.Is(err, libvirt.ErrNotFound):
			return nil, tfkit.AtAttribute(path.Root("domain_id"), tfkit.Sentence("Domain %q does not exist on %s.", domain, r.Client.URI()))
		case err != nil:
			return nil, err
		}
		plan.fromSnapshot(s)
		return plan, nil
	})
}

func (r *Resource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	tfkit.Refresh(ctx, req, resp, time.Minute, (*Model).what, func(ctx context.Context, m *Model) (*Model, error) {
		domain, name := m.snapshotRef()
		s, err := r.Client.GetSnapshot(ctx, domain, name)
		if err != nil {
			return nil, err
		}
		m.fromSnapshot(s)
		if m.DomainID.IsNull() || m.DomainID.ValueString() == "" {
			m.DomainID = types.StringValue(s.DomainUUID) // after import by UUID or name: see ImportState
		}
		return m, nil
	})
}

// Delete deletes the snapshot; one whose whole domain is gone is deleted too.
func (r *Resource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	tfkit.Remove(ctx, req, resp, 5*time.Minute, (*Model).what, func(ctx context.Context, m *Model, _ *diag.Diagnostics) error {
		domain, name := m.snapshotRef()
		return r.Client.DeleteSnapshot(ctx, domain, name)
	})
}

func (r *Resource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	ctx, bound := tfkit.ImportContext(ctx, r.Client, "libvirt_snapshot", req.ID)
	defer bound.End(&resp.Diagnostics)
	domain, name, ok := strings.Cut(req.ID, "/")
	if !ok || domain == "" || name == "" || !snapshotNameRegexp.MatchString(name) {
		resp.Diagnostics.AddError("Invalid import id", "expected <domain name or uuid>/<snapshot name>, e.g. web-1/before-upgrade, got "+strconv.Quote(req.ID))
		return
	}
	s, err := r.Client.GetSnapshot(ctx, domain, name)
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("Unable to import snapshot %s of domain %s", name, domain), err.Error())
		return
	}
	// domain_id keeps the form the user gave (name or UUID): the config names it the same way.
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("domain_id"), domain)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), s.Name)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), s.DomainUUID+"/"+s.Name)...)
}

// ValidateConfig refuses quiesce with memory at plan time: libvirt quiesces disk-only
// snapshots only.
func (r *Resource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m Model
	if d := req.Config.Get(ctx, &m); d.HasError() {
		return
	}
	if m.Quiesce.ValueBool() && m.Memory.ValueBool() {
		resp.Diagnostics.AddAttributeError(path.Root("quiesce"), "Invalid snapshot kind",
			"quiesce = true makes a disk-only snapshot (libvirt quiesces only those): remove memory = true, or quiesce.")
	}
}

var snapshotNameRegexp = regexp.MustCompile(`^[^/\s]+$`)

const quiesceSnapshotSummary = "an **external** disk-only snapshot, with the guest's filesystems frozen by the " +
	"QEMU guest agent while it is taken (see `quiesce`)."

const quiesceSnapshotDescription = "Freeze the guest's filesystems through the QEMU guest agent while the snapshot is " +
	"taken (libvirt's `VIR_DOMAIN_SNAPSHOT_CREATE_QUIESCE`), so it holds them as if cleanly unmounted. Default `false`. " +
	"Needs `memory = false` (checked at plan time). Of a **running** domain this is an **external** disk-only snapshot: " +
	"each writable file disk gets a new qcow2 overlay next to its image, named `<image>.tfsnap-<snapshot name>`, which " +
	"the guest writes into from then on (the image below keeps the snapshot); read-only disks (cdrom, seed ISO) are left " +
	"out, and a writable disk that is not a file is refused. The guest must run `qemu-guest-agent` and the domain needs " +
	"the agent channel (`org.qemu.guest_agent.0`, `libvirt_domain`'s `devices.qemu_agent`, on by default); an agent that " +
	"is missing or does not answer fails the create with an error saying so, and nothing is left (no snapshot, no " +
	"overlay). A guest that cannot be thawed after the snapshot (its agent's thaw fails twice) fails the create too, " +
	"but the snapshot was taken frozen: it is kept in state, tainted, and the next apply replaces it. While the snapshot exists `libvirt_domain` still shows its disks on their volumes (no drift) and keeps " +
	"them on the overlays when it updates the domain. Destroying the snapshot commits the overlays back into the images " +
	"and removes them (libvirt 9.0 does this running or shut off). libvirt reverts external snapshots only from 9.9: on " +
	"an older libvirt `libvirt_snapshot_revert` refuses it with an error and changes nothing. Of a **shut-off** domain " +
	"nothing runs that could write, so `quiesce = true` takes the usual internal disk-only snapshot (no freeze, no " +
	"agent needed; revertable). Import: libvirt does not record the flag; an external snapshot imports as `quiesce = " +
	"true`, an internal one as `false`."
