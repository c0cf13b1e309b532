package provider

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

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

// snapshotResource is an object, not an action (Read looks at it, Delete deletes it), but
// like the actions it is never changed in place.
type snapshotResource struct {
	replacedOnly[snapshotModel]
}

func (r *snapshotResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = resourceSchema(ctx, "An internal qcow2 snapshot of a domain, taken atomically. Two kinds, both of which libvirt can "+
		"revert (see `libvirt_snapshot_revert`) and delete:\n\n"+
		"- `memory = true`: a snapshot of a **running** domain with its RAM and device state; reverting brings the "+
		"guest back running exactly where it was. Under TCG (no KVM) this takes a while: the default create timeout is 10 minutes.\n"+
		"- `memory = false` (default): a disk-only snapshot of a **shut-off** domain. External disk-only snapshots "+
		"are not offered: libvirt 9.0 cannot revert them.\n\n"+
		"Every writable disk of the domain must be qcow2. UEFI domains: a disk-only snapshot of a shut-off one works "+
		"but does not include its nvram varstore; a memory snapshot of a running one is refused by libvirt "+
		"(\"internal snapshots of a VM with pflash based firmware are not supported\", libvirt 9.0). See the "+
		"UEFI and snapshots guide. Any change replaces the snapshot. Destroying the domain "+
		"first is fine: the domain's delete drops its snapshots' metadata, and a snapshot whose domain is gone is "+
		"deleted without error. The snapshot's data then stays inside the qcow2 images until they are deleted; a "+
		"new domain on the same images that takes a snapshot of the same name gets a second one of that name in the "+
		"qcow2, and a revert may pick the older: keep the default timestamped names, or delete disks with their domain.",
		noUpdateTimeouts, map[string]schema.Attribute{
			"id":        idAttribute("`<domain uuid>/<snapshot name>`."),
			"domain_id": requiredReplace("The domain: its UUID (e.g. `libvirt_domain.x.id`) or its name.", stringvalidator.LengthAtLeast(1), stringvalidator.NoneOf("/")),
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
			"description":   optionalReplace("Free text stored with the snapshot."),
			"memory":        boolReplace("Include the guest's RAM (the domain must be running). Default `false`: disk-only, the domain must be shut off.", false),
			"creation_time": keptString("When libvirt took the snapshot, RFC 3339 (UTC)."),
			"domain_state":  keptString("The domain's state recorded in the snapshot (`running`, `paused`, `shutoff`): the state a revert returns to."),
		})
}

type snapshotModel struct {
	withTimeouts
	ID           types.String `tfsdk:"id"`
	DomainID     types.String `tfsdk:"domain_id"`
	Name         types.String `tfsdk:"name"`
	Description  types.String `tfsdk:"description"`
	Memory       types.Bool   `tfsdk:"memory"`
	CreationTime types.String `tfsdk:"creation_time"`
	DomainState  types.String `tfsdk:"domain_state"`
}

// fromSnapshot fills m from what libvirt recorded.
func (m *snapshotModel) fromSnapshot(s *libvirt.Snapshot) {
	m.ID = types.StringValue(s.DomainUUID + "/" + s.Name)
	m.Name = types.StringValue(s.Name)
	m.Description = types.StringNull()
	if s.Description != "" {
		m.Description = types.StringValue(s.Description)
	}
	m.Memory = types.BoolValue(s.Memory)
	m.CreationTime = types.StringValue(s.CreationTime.Format(time.RFC3339))
	m.DomainState = types.StringValue(s.State)
}

// snapshotRef is the domain and snapshot name a state entry points at: the domain UUID
// from the id once known (a domain renamed later is still found), else domain_id.
func (m *snapshotModel) snapshotRef() (domain, name string) {
	if d, n, ok := strings.Cut(m.ID.ValueString(), "/"); ok && d != "" && n != "" {
		return d, n
	}
	return m.DomainID.ValueString(), m.Name.ValueString()
}

func (m *snapshotModel) what() string {
	domain, name := m.snapshotRef()
	return fmt.Sprintf("snapshot %s of domain %s", name, domain)
}

func (r *snapshotResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	create(ctx, req, resp, 10*time.Minute, (*snapshotModel).what, func(ctx context.Context, plan *snapshotModel, _ *diag.Diagnostics) (*snapshotModel, error) {
		if plan.Name.IsUnknown() || plan.Name.IsNull() || plan.Name.ValueString() == "" {
			plan.Name = types.StringValue("tfsnap-" + time.Now().UTC().Format("20060102-150405"))
		}
		domain := plan.DomainID.ValueString()
		s, err := r.client.CreateSnapshot(ctx, domain, libvirt.SnapshotSpec{
			Name:        plan.Name.ValueString(),
			Description: plan.Description.ValueString(),
			Memory:      plan.Memory.ValueBool(),
		})
		switch {
		case errors.Is(err, libvirt.ErrSnapshotState):
			return nil, atAttribute(path.Root("memory"), err)
		case errors.Is(err, libvirt.ErrNotFound):
			return nil, atAttribute(path.Root("domain_id"), sentence("Domain %q does not exist on %s.", domain, r.client.URI()))
		case err != nil:
			return nil, err
		}
		plan.fromSnapshot(s)
		return plan, nil
	})
}

func (r *snapshotResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	refresh(ctx, req, resp, time.Minute, (*snapshotModel).what, func(ctx context.Context, m *snapshotModel) (*snapshotModel, error) {
		domain, name := m.snapshotRef()
		s, err := r.client.GetSnapshot(ctx, domain, name)
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
func (r *snapshotResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	remove(ctx, req, resp, 5*time.Minute, (*snapshotModel).what, func(ctx context.Context, m *snapshotModel, _ *diag.Diagnostics) error {
		domain, name := m.snapshotRef()
		return r.client.DeleteSnapshot(ctx, domain, name)
	})
}

func (r *snapshotResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	ctx, bound := importContext(ctx, r.client, "libvirt_snapshot", req.ID)
	defer bound.end(&resp.Diagnostics)
	domain, name, ok := strings.Cut(req.ID, "/")
	if !ok || domain == "" || name == "" || !snapshotNameRegexp.MatchString(name) {
		resp.Diagnostics.AddError("Invalid import id", "expected <domain name or uuid>/<snapshot name>, e.g. web-1/before-upgrade, got "+strconv.Quote(req.ID))
		return
	}
	s, err := r.client.GetSnapshot(ctx, domain, name)
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("Unable to import snapshot %s of domain %s", name, domain), err.Error())
		return
	}
	// domain_id keeps the form the user gave (name or UUID): the config names it the same way.
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("domain_id"), domain)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), s.Name)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), s.DomainUUID+"/"+s.Name)...)
}

var snapshotNameRegexp = regexp.MustCompile(`^[^/\s]+$`)
