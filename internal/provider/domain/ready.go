package domain

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit/validators"
	"github.com/kvmforge/terraform-provider-libvirt/internal/workflow"
)

// wait_for_ready: create and update wait, after any wait_for_ip, until the guest agent
// answers and a command run through it exits 0. Nothing of it is in the domain's
// definition: it is kept from the plan (and state) as written; an import has none.

type domainReadyModel struct {
	WaitForReady *readyModel `tfsdk:"wait_for_ready"`
}

type readyModel struct {
	Timeout types.String `tfsdk:"timeout"`
	Agent   types.Bool   `tfsdk:"agent"`
	Command types.List   `tfsdk:"command"`
}

const defaultReadyTimeout = 5 * time.Minute

var domainReady = family{
	attributes: map[string]schema.Attribute{
		"wait_for_ready": schema.SingleNestedAttribute{
			MarkdownDescription: "Make create and update (never a refresh or an import) wait, after any `wait_for_ip`, until the guest " +
				"is ready: its QEMU guest agent answers `guest-ping`, then `command` (when set) run in the guest through the agent's " +
				"`guest-exec` exits 0. Agent errors (the agent not up yet, `guest-exec` refused) are retried until `timeout`; a " +
				"command that runs and exits non-zero fails the apply at once with its output — a readiness command such as " +
				"`cloud-init status --wait` blocks by itself until it knows, so a non-zero exit means failed, not \"not yet\". " +
				"When the wait fails, the error quotes the last 20 lines the guest wrote on its console while it was waited for " +
				"(read through libvirt's console stream from when the wait began: right after the start on create) and the domain " +
				"stays in state (tainted after a create, as with `wait_for_ip`). Only for a running domain; needs `qemu_agent`. " +
				"Changing it changes nothing in the domain: the next apply waits with the new values.",
			Optional: true,
			Attributes: map[string]schema.Attribute{
				"timeout": tfkit.OptionalString("Go duration for the whole wait (agent and command), e.g. `10m`. Default `5m`.", validators.Duration()),
				"agent": schema.BoolAttribute{
					MarkdownDescription: "Wait until the guest agent answers `guest-ping`. Default `true`; a `command` waits for the agent anyway.",
					Optional:            true,
				},
				"command": schema.ListAttribute{
					MarkdownDescription: "Program and arguments run in the guest through the agent, e.g. `[\"cloud-init\", \"status\", \"--wait\"]`; " +
						"it must exit 0. Run once per attempt; no shell unless you name one (`[\"sh\", \"-c\", \"...\"]`).",
					Optional:    true,
					ElementType: types.StringType,
					Validators:  []validator.List{listvalidator.SizeAtLeast(1), listvalidator.ValueStringsAre(stringvalidator.LengthAtLeast(1))},
				},
			},
		},
	},
	toSpec:   func(*Model, *domainxml.Spec) {},
	fromSpec: func(_ domainxml.Spec, prior, m *Model) { m.WaitForReady = prior.WaitForReady },
	validate: func(m *Model, d *diag.Diagnostics) {
		w := m.WaitForReady
		if w == nil {
			return
		}
		at := path.Root("wait_for_ready")
		if tfkit.Known(w.Agent) && !w.Agent.ValueBool() && w.Command.IsNull() {
			d.AddAttributeError(at.AtName("agent"), "Nothing to wait for",
				"wait_for_ready with agent = false and no command waits for nothing. Set a command, agent = true, or remove wait_for_ready.")
		}
		if tfkit.Known(m.QemuAgent) && !m.QemuAgent.ValueBool() {
			d.AddAttributeError(at, "wait_for_ready needs the guest agent",
				"wait_for_ready asks the QEMU guest agent, but qemu_agent = false leaves the domain without its channel. Set qemu_agent = true or remove wait_for_ready.")
		}
	},
}

// readyWait is the wait_for_ready of m, nil when there is none or nothing to wait for.
func readyWait(ctx context.Context, id string, m *Model) (*workflow.Ready, error) {
	w := m.WaitForReady
	if w == nil || (tfkit.Known(w.Agent) && !w.Agent.ValueBool() && w.Command.IsNull()) {
		return nil, nil
	}
	r := &workflow.Ready{ID: id, Name: m.Name.ValueString(), Timeout: defaultReadyTimeout}
	if tfkit.Known(w.Timeout) {
		d, err := time.ParseDuration(w.Timeout.ValueString())
		if err != nil {
			return nil, err
		}
		r.Timeout = d
	}
	if !w.Command.IsNull() && !w.Command.IsUnknown() {
		if diags := w.Command.ElementsAs(ctx, &r.Command, false); diags.HasError() {
			return nil, tfkit.DiagsErr(diags)
		}
	}
	return r, nil
}

// waitForGuest runs the waits of a create or update on a running domain: every
// wait_for_ip, then wait_for_ready. While they run the guest's console is read, so that a
// failed wait quotes what the guest printed (or says why the console could not be read).
func (r *Resource) waitForGuest(ctx context.Context, id string, plan *Model) error {
	ready, err := readyWait(ctx, id, plan)
	if err != nil {
		return err
	}
	if ready == nil && !hasIPWait(plan) {
		return nil
	}
	console := r.Client.WatchConsole(ctx, id, workflow.ConsoleTailLines)
	defer console.Stop()
	if err := r.waitForIPs(ctx, id, plan); err != nil {
		return workflow.WithConsoleTail(err, console)
	}
	if ready == nil {
		return nil
	}
	return workflow.WaitReady(ctx, r.Client, *ready, console)
}

func hasIPWait(m *Model) bool {
	for _, n := range m.Interfaces {
		if n.WaitForIP != nil {
			return true
		}
	}
	return false
}

var _ workflow.ReadyAPI = (*libvirt.Client)(nil)
