package domain

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
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
				"(and its disks with `migration.copy_storage = \"all\"`). The plan says `update_method = " +
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
						"the disks are copied to the new host, into volumes at the same paths (a pool with the same directory must " +
						"be active there): by libvirt while the guest runs, through the provider for a stopped domain; read-only media " +
						"(a cloud-init seed) and, for a stopped domain, backing files are copied ahead where the new host lacks them. " +
						"The old host's copies are removed once the domain is on the new host and nothing else there uses them " +
						"(never on storage both hosts see). Move the disks' `libvirt_volume` resources with it (their `host`).",
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
// old one (its domain type, machine type and CPU model), and says in a warning where the
// domain goes and how.
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
	for _, problem := range targetLacks(ctx, r.Client, &def) {
		d.AddAttributeError(path.Root("host"), "Host "+to+" cannot run libvirt_domain "+name,
			fmt.Sprintf("libvirt_domain %s cannot migrate from host %s to host %s: %s. Choose another host, or change the domain "+
				"first (on its current host) so that the new host can run it.", name, from, to, problem))
	}
	how := "its definition moves (the domain is stopped)"
	if copyAll {
		how += ", and the files of its disks are copied through the provider (then removed from host " + from + ")"
	}
	if st.Active {
		how = "live: the guest keeps running while its memory moves"
		if copyAll {
			how += ", and its disks are copied (then removed from host " + from + ")"
		}
	}
	if copyAll {
		how += ". Move the libvirt_volume resources of its disks in the same apply (their host too): one left on host " + from +
			" finds its volume gone after the move, and the next plan makes it anew there"
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

// copyAhead copies to r.Client's host, through the provider, what a storage copy needs
// there and libvirt does not copy: the read-only media of a running domain (a cloud-init
// seed: the guest opens it there at once); for a stopped domain, every file of its disks,
// backing files deepest first (libvirt moves a stopped domain's definition only). Files the
// new host has already (moved by their libvirt_volume, or on storage both hosts see) stay.
func (r *Resource) copyAhead(ctx context.Context, src *libvirt.Client, files *libvirt.MigrationFiles, to string) error {
	need := slices.Clone(files.Media)
	if !files.Active {
		backing := slices.Clone(files.Backing)
		slices.Reverse(backing)
		need = slices.Concat(backing, files.Disks, files.Media)
	}
	for _, p := range need {
		if _, err := r.Client.VolumeInfo(ctx, libvirt.VolumeRef{Key: p}); err == nil {
			continue
		}
		if shared, _ := src.SharesDirWith(ctx, r.Client, filepath.Dir(p)); shared {
			continue // the same file there; a volume not listed yet, or no pool over it
		}
		info, err := src.VolumeInfo(ctx, libvirt.VolumeRef{Key: p})
		if err != nil {
			return fmt.Errorf("copy %s to host %s: %w", p, to, err)
		}
		tflog.Info(ctx, "copying "+p+" to host "+to+" ahead of the migration", map[string]any{"bytes": libvirt.RawCapacity(info)})
		if _, err := r.Client.CopyVolumeFrom(ctx, src, info); err != nil {
			return fmt.Errorf("copy %s to host %s: %w", p, to, err)
		}
	}
	return nil
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
	var files *libvirt.MigrationFiles // with copy_storage = "all": what moves, and what goes from here after
	if opts.CopyStorage == "all" {
		if files, err = src.MigrationFiles(ctx, state.ID.ValueString()); err != nil {
			return false, err
		}
		if err := r.copyAhead(ctx, src, files, plan.HostOf()); err != nil {
			return false, err
		}
		if !files.Active {
			opts.CopyStorage = "none" // copied ahead: a stopped domain moves its definition only
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
	// are its base images and seeds where their volumes moved too and nothing else uses them
	// (never a file on storage both hosts see).
	if files == nil {
		return false, nil
	}
	removed, left := src.RemoveOldCopies(ctx, r.Client, slices.Concat(files.Disks, files.Media, files.Backing))
	tflog.Info(ctx, "after migrating domain "+name+": old copies on host "+state.HostOf(), map[string]any{"removed": removed, "kept": left})
	if len(left) > 0 {
		d.AddWarning("Old copies left on host "+state.HostOf(),
			fmt.Sprintf("libvirt_domain %s runs on host %s; on host %s these files stay (why, for each): %v.", name, plan.HostOf(), state.HostOf(), left))
	}
	return false, nil
}
