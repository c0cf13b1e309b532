package clustermachine

import (
	"context"
	"fmt"
	"time"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/google/uuid"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/workflow"
)

var (
	_ resource.ResourceWithConfigure   = (*Resource)(nil)
	_ resource.ResourceWithImportState = (*Resource)(nil)
	_ resource.ResourceWithModifyPlan  = (*Resource)(nil)
)

// NewClusterMachineResource is the libvirt_cluster_machine resource: a Cluster API style
// machine made of a qcow2 overlay, a NoCloud seed, a DHCP reservation and a domain, all
// named by the rules of internal/capi. Its create, delete and read are
// internal/workflow's (machine*.go); this file translates.
type Resource struct {
	tfkit.ResourceBase
}

// Defaults of libvirt_cluster_machine.
const (
	cmDefaultVCPU         = 1
	cmDefaultMemoryMiB    = 1024
	cmDefaultDiskGiB      = 20
	cmDefaultLeaseTimeout = "5m"
	cmHeadroom            = workflow.MachineHeadroom
	cmShutdownTimeout     = workflow.MachineShutdownTimeout
)

type Model struct {
	tfkit.WithTimeouts
	tfkit.OnHost
	ID           types.String `tfsdk:"id"`
	Namespace    types.String `tfsdk:"namespace"`
	Name         types.String `tfsdk:"name"`
	UID          types.String `tfsdk:"uid"`
	Network      types.String `tfsdk:"network"`
	BasePool     types.String `tfsdk:"base_pool"`
	DomainPool   types.String `tfsdk:"domain_pool"`
	Image        types.String `tfsdk:"image"`
	VCPU         types.Int64  `tfsdk:"vcpu"`
	MemoryMiB    types.Int64  `tfsdk:"memory_mib"`
	DiskGiB      types.Int64  `tfsdk:"disk_gib"`
	UserData     types.String `tfsdk:"user_data"`
	Running      types.Bool   `tfsdk:"running"`
	LeaseTimeout types.String `tfsdk:"lease_timeout"`
	ProviderID   types.String `tfsdk:"provider_id"`
	DomainName   types.String `tfsdk:"domain_name"`
	MAC          types.String `tfsdk:"mac"`
	IP           types.String `tfsdk:"ip"`
	Addresses    types.List   `tfsdk:"addresses"`
	MaxVCPU      types.Int64  `tfsdk:"max_vcpu"`
	MaxMemoryMiB types.Int64  `tfsdk:"max_memory_mib"`
	UpdateMethod types.String `tfsdk:"update_method"`
}

// machineWhat names a machine in messages: by its namespace and name while it is made,
// by its domain afterwards.
func machineWhat(m *Model) string {
	return "libvirt cluster machine " + tfkit.NameOr(m.DomainName, m.ID.ValueString())
}

func (r *Resource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	tfkit.Create(ctx, req, resp, 20*time.Minute,
		func(m *Model) string {
			return fmt.Sprintf("libvirt cluster machine %s/%s (domain %s)", m.Namespace.ValueString(), m.Name.ValueString(), machinePartsOf(m).Domain)
		},
		func(ctx context.Context, plan *Model, d *diag.Diagnostics) (*Model, error) {
			if !tfkit.Known(plan.UID) || plan.UID.ValueString() == "" {
				plan.UID = types.StringValue(uuid.NewString())
			}
			res, err := workflow.CreateMachine(ctx, r.Client, machineRequest(ctx, plan))
			for _, w := range res.Warnings {
				d.AddWarning(w.Summary, w.Detail)
			}
			if err != nil {
				return nil, err
			}
			plan.UpdateMethod = types.StringValue(string(domainxml.ChangeNone))
			plan.ID = plan.UID
			// Everything is made: from here on the machine is in state, whatever happens.
			var waitErr error
			if plan.Running.ValueBool() {
				p := machinePartsOf(plan)
				if _, err := workflow.WaitForLease(ctx, r.Client, p.Network, p.MAC, res.IP, leaseTimeout(plan)); err != nil {
					waitErr = fmt.Errorf("machine %s was created and stays in state (tainted: the next apply replaces it), but the guest "+
						"took no lease of its reserved address %s: %w. Check that the image boots and runs DHCP on its NIC, or raise lease_timeout",
						p.Domain, res.IP, err)
				}
			}
			return r.readBack(ctx, plan, waitErr)
		})
}

// readBack reads the machine into state after create or update and returns err (the
// change's own) or the read's failure; a machine that cannot be read is stored as planned.
func (r *Resource) readBack(ctx context.Context, plan *Model, err error) (*Model, error) {
	got, rerr := tfkit.ReadBack(ctx, func(ctx context.Context) (*Model, error) {
		return r.read(ctx, plan.UID.ValueString(), plan)
	})
	if rerr != nil {
		if err == nil {
			err = rerr
		}
		got = plan
		if !tfkit.Known(got.IP) {
			got.IP = types.StringValue("")
		}
		if !tfkit.Known(got.Addresses) {
			got.Addresses = tfkit.StringList(nil)
		}
		fillMachineComputed(got)
	}
	return got, err
}

func (r *Resource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	tfkit.Refresh(ctx, req, resp, time.Minute, machineWhat, func(ctx context.Context, m *Model) (*Model, error) {
		return r.read(ctx, m.ID.ValueString(), m)
	})
}

func (r *Resource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	tfkit.Remove(ctx, req, resp, 10*time.Minute, func(m *Model) string { return "libvirt cluster machine " + machinePartsOf(m).Domain },
		func(ctx context.Context, state *Model, _ *diag.Diagnostics) error {
			return workflow.DeleteMachine(ctx, r.Client, machinePartsOf(state))
		})
}

// ImportState takes the domain's name or UUID; Read fills in the rest from the domain's
// metadata and its seed.
func (r *Resource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if req.ID == "" {
		resp.Diagnostics.AddError("Invalid import id", "expected the machine's domain name or its uid, got an empty string")
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
}

// machineLog is the workflow's log, through tflog.
func machineLog(ctx context.Context) workflow.Logf {
	return func(msg string, fields map[string]any) { tflog.Info(ctx, msg, fields) }
}
