package domain

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit/validators"
)

// Moving a domain to another of the provider's hosts (the contract's "Many hosts, one
// plan"). With migrate = true a change of `host` is an update that migrates the domain
// peer to peer (libvirt.MigrateDomain): live while it runs (uuid, MACs and guest uptime
// kept), its definition alone while it is stopped. Without it, a new host replaces the
// domain. The plan checks that the new host can run the domain (its type, machine and CPU
// model) and says "migrate" in update_method; Update migrates first, then applies the rest
// of the plan on the new host. A migration that fails leaves the domain, and the state,
// on the old host: the next apply tries again.

// updateMigrate is update_method's value for a plan that moves the domain.
const updateMigrate = "migrate"

type domainMigrateModel struct {
	Migrate   types.Bool      `tfsdk:"migrate"`
	Migration *migrationModel `tfsdk:"migration"`
}

type migrationModel struct {
	CopyStorage  types.String `tfsdk:"copy_storage"`
	BandwidthMiB types.Int64  `tfsdk:"bandwidth_mib"`
	Timeout      types.String `tfsdk:"timeout"`
	OnTimeout    types.String `tfsdk:"on_timeout"`
}

func migrateAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"host": schema.StringAttribute{
			MarkdownDescription: "Name of the provider's host the domain lives on: one of the provider's `hosts`, or `default` (the " +
				"provider's own `uri`), which null means too. Changing it replaces the domain, unless `migrate = true`: then the " +
				"domain migrates to the new host (see `migrate`).",
			Optional:   true,
			Validators: []validator.String{stringvalidator.RegexMatches(tfkit.HostNamePattern, "must be a host name: one of the provider's `hosts`, or `default`")},
			PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplaceIf(hostChangedWithoutMigrate,
				"If the host changes and migrate is not true, Terraform will destroy and recreate the resource.",
				"If the host changes and `migrate` is not true, Terraform will destroy and recreate the resource.")},
		},
		"migrate": schema.BoolAttribute{
			MarkdownDescription: "Whether a change of `host` moves the domain instead of replacing it. A running domain migrates live, " +
				"peer to peer (the old host's libvirtd sends it to the new one's): its UUID, MACs and the guest's uptime stay, it is " +
				"defined on the new host and undefined on the old one only once it runs there. A stopped domain moves its definition " +
				"(its disks must be on storage both hosts see, or move with `libvirt_volume.host`). The plan says `update_method = " +
				"\"migrate\"`; a migration that fails leaves the domain running on the old host and the state saying so. " +
				"Default `false`.",
			Optional: true,
		},
		"migration": schema.SingleNestedAttribute{
			MarkdownDescription: "How a domain moves when `migrate = true` and `host` changes. Null: libvirt's defaults, disks on " +
				"storage both hosts see, no time limit.",
			Optional: true,
			Attributes: map[string]schema.Attribute{
				"copy_storage": schema.StringAttribute{
					MarkdownDescription: "`none` (default): the disks are on storage both hosts see (a netfs or shared pool). `all`: " +
						"the disks are copied to the new host while the guest runs, into volumes made there at the same paths (an " +
						"active pool must hold them), and removed from the old host once the guest runs on the new one. Only a running " +
						"domain can copy its disks.",
					Optional:   true,
					Validators: []validator.String{stringvalidator.OneOf("none", "all")},
				},
				"bandwidth_mib": schema.Int64Attribute{
					MarkdownDescription: "Cap on the transfer, MiB/s (memory and disks). Default: libvirt's (unlimited).",
					Optional:            true,
					Validators:          []validator.Int64{int64validator.Between(1, 1<<20)},
				},
				"timeout": schema.StringAttribute{
					MarkdownDescription: "How long a live migration may run before `on_timeout` acts, e.g. `5m`. Default: no limit.",
					Optional:            true,
					Validators:          []validator.String{validators.Duration()},
				},
				"on_timeout": schema.StringAttribute{
					MarkdownDescription: "What happens when `timeout` passes: `abort` (default: the domain keeps running on the old " +
						"host and the apply fails), `pause` (the guest is paused so that its memory stops changing and the move " +
						"completes), `postcopy` (the guest runs on the new host at once and the rest of its memory follows; needs " +
						"userfaultfd for QEMU on the new host).",
					Optional:   true,
					Validators: []validator.String{stringvalidator.OneOf(libvirt.OnTimeoutAbort, libvirt.OnTimeoutPause, libvirt.OnTimeoutPostcopy)},
				},
			},
		},
	}
}

// hostChangedWithoutMigrate replaces the domain on a new host unless migrate = true.
func hostChangedWithoutMigrate(ctx context.Context, req planmodifier.StringRequest, resp *stringplanmodifier.RequiresReplaceIfFuncResponse) {
	tfkit.HostChanged(ctx, req, resp)
	if !resp.RequiresReplace || req.PlanValue.IsUnknown() {
		return
	}
	var migrate types.Bool
	if d := req.Plan.GetAttribute(ctx, path.Root("migrate"), &migrate); !d.HasError() && migrate.ValueBool() {
		resp.RequiresReplace = false
	}
}

// moving is true when the plan migrates the domain to another host.
func moving(plan, state *Model) bool {
	return state != nil && !plan.Host.IsUnknown() && plan.HostOf() != state.HostOf() && plan.Migrate.ValueBool()
}

// planMigration checks at plan time that the new host can take the domain as it is on the
// old one (its domain type, machine type and CPU model), that a stopped domain is not to
// copy its disks, and says in a warning where the domain goes and how.
func (r *Resource) planMigration(ctx context.Context, plan, state *Model, d *diag.Diagnostics) {
	name, from, to := plan.Name.ValueString(), state.HostOf(), plan.HostOf()
	if r.Hosts == nil || r.Client == nil {
		return
	}
	src, err := r.Hosts.Client(from)
	if err != nil {
		d.AddAttributeError(path.Root("host"), "Cannot migrate libvirt_domain "+name, err.Error())
		return
	}
	st, err := src.GetDomainStatus(ctx, state.ID.ValueString())
	if err != nil {
		return // gone or unreachable: the refresh has said so; apply will too
	}
	var def libvirtxml.Domain
	if err := def.Unmarshal(st.XML); err != nil {
		return
	}
	copyAll := plan.Migration != nil && plan.Migration.CopyStorage.ValueString() == "all"
	if copyAll && !st.Active {
		d.AddAttributeError(path.Root("migration").AtName("copy_storage"), "Cannot copy the disks of a stopped domain",
			fmt.Sprintf("libvirt_domain %s is %s on host %s: a stopped domain moves its definition only, libvirt cannot copy its disks "+
				"offline. Start it first (running = true, applied before the move), or set migration.copy_storage = \"none\" with its "+
				"disks on storage both hosts see (or moved with their libvirt_volume's host).", name, st.State, from))
	}
	for _, problem := range targetLacks(ctx, r.Client, &def) {
		d.AddAttributeError(path.Root("host"), "Host "+to+" cannot run libvirt_domain "+name,
			fmt.Sprintf("libvirt_domain %s cannot migrate from host %s to host %s: %s. Choose another host, or change the domain "+
				"first (on its current host) so that the new host can run it.", name, from, to, problem))
	}
	how := "its definition moves (the domain is stopped)"
	if st.Active {
		how = "live: the guest keeps running while its memory moves"
		if copyAll {
			how += ", and its disks are copied (then removed from host " + from + ")"
		}
	}
	d.AddWarning(fmt.Sprintf("libvirt_domain %s will migrate from host %s to host %s", name, from, to),
		fmt.Sprintf("The domain is moved, not replaced: %s. Its UUID and MACs stay. If the migration fails, the domain stays on "+
			"host %s and so does the state; the next apply tries again.", how, from))
}

// targetLacks says what of the domain's definition host c does not offer.
func targetLacks(ctx context.Context, c *libvirt.Client, def *libvirtxml.Domain) []string {
	info, err := c.HostInfo(ctx)
	if err != nil {
		return nil // an unreachable host fails at apply, with its own error
	}
	var out []string
	if def.Type != "" && len(info.DomainTypes) > 0 && !slices.Contains(info.DomainTypes, def.Type) {
		out = append(out, fmt.Sprintf("it offers %v domains, not %s", info.DomainTypes, def.Type))
	}
	var arch, machine string
	if def.OS != nil && def.OS.Type != nil {
		arch, machine = def.OS.Type.Arch, def.OS.Type.Machine
	}
	if machine != "" && (arch == "" || arch == info.Arch) && len(info.Machines) > 0 && !slices.Contains(info.Machines, machine) {
		out = append(out, fmt.Sprintf("it has no machine type %s", machine))
	}
	if def.CPU != nil && def.CPU.Model != nil && def.CPU.Model.Value != "" && (def.CPU.Mode == "" || def.CPU.Mode == "custom") {
		dc, err := c.DomainCapabilities(ctx, "", arch, machine, def.Type)
		if err == nil && dc.CPUModels != nil {
			switch usable, known := dc.CPUModels[def.CPU.Model.Value]; {
			case !known:
				out = append(out, fmt.Sprintf("it has no CPU model %s", def.CPU.Model.Value))
			case usable != "yes":
				out = append(out, fmt.Sprintf("it cannot run CPU model %s (libvirt says usable = %s there)", def.CPU.Model.Value, usable))
			}
		}
	}
	return out
}

// migrate moves the domain of state to plan's host (r.Client's). After a failure the
// error says where the domain is; movedAnyway is true when it is on the new host all the
// same (the move completed but a check after it failed).
func (r *Resource) migrate(ctx context.Context, plan, state *Model, d *diag.Diagnostics) (movedAnyway bool, err error) {
	if r.Hosts == nil {
		return false, errors.New("the provider's hosts are not configured")
	}
	src, err := r.Hosts.Client(state.HostOf())
	if err != nil {
		return false, err
	}
	opts := libvirt.MigrateOptions{DestURI: r.Hosts.PeerURI(plan.HostOf()), CopyStorage: "none", OnTimeout: libvirt.OnTimeoutAbort}
	if m := plan.Migration; m != nil {
		if tfkit.Known(m.CopyStorage) {
			opts.CopyStorage = m.CopyStorage.ValueString()
		}
		if tfkit.Known(m.BandwidthMiB) {
			opts.BandwidthMiB = uint64(m.BandwidthMiB.ValueInt64())
		}
		if tfkit.Known(m.Timeout) {
			if opts.Timeout, err = time.ParseDuration(m.Timeout.ValueString()); err != nil {
				return false, fmt.Errorf("migration.timeout: %w", err)
			}
		}
		if tfkit.Known(m.OnTimeout) {
			opts.OnTimeout = m.OnTimeout.ValueString()
		}
	}
	name := plan.Name.ValueString()
	opts.Progress = func(p libvirt.MigrateProgress) {
		tflog.Info(ctx, "migrating domain "+name+": "+p.String(), map[string]any{"from": state.HostOf(), "to": plan.HostOf()})
	}
	var copied, companions []string // what the storage copy moves, and what moves beside it
	if opts.CopyStorage == "all" {
		if copied, err = src.MigratedDiskPaths(ctx, state.ID.ValueString()); err != nil {
			return false, err
		}
		if companions, err = src.MigrationCompanions(ctx, state.ID.ValueString()); err != nil {
			return false, err
		}
	}
	start := time.Now()
	tflog.Info(ctx, "migrating domain "+name, map[string]any{"from": state.HostOf(), "to": plan.HostOf(), "copy_storage": opts.CopyStorage})
	err = src.MigrateDomain(ctx, state.ID.ValueString(), r.Client, opts)
	var merr *libvirt.MigrateError
	if errors.As(err, &merr) && merr.Where == "destination" {
		return true, err
	}
	if err != nil {
		return false, err
	}
	tflog.Info(ctx, "migrated domain "+name, map[string]any{"from": state.HostOf(), "to": plan.HostOf(), "seconds": time.Since(start).Seconds()})
	// The guest runs on the new host: the old host's copies of its disks are stale, and so
	// are its base images and seeds where their volumes moved too and nothing else uses them.
	if _, left := src.RemoveVolumesAt(ctx, copied); len(left) > 0 {
		d.AddWarning("Old disk copies left on host "+state.HostOf(),
			fmt.Sprintf("libvirt_domain %s runs on host %s with copies of its disks; these of host %s could not be removed: %v. "+
				"Remove them by hand.", name, plan.HostOf(), state.HostOf(), left))
	}
	if removed, left := src.RemoveMovedCompanions(ctx, r.Client, companions); len(removed)+len(left) > 0 {
		tflog.Info(ctx, "after migrating domain "+name+": backing files and read-only media on the old host",
			map[string]any{"host": state.HostOf(), "removed": removed, "kept": left})
	}
	return false, nil
}
