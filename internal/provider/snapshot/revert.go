package snapshot

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

type RevertResource struct {
	tfkit.ActionResource[RevertModel]
}

func (r *RevertResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = tfkit.ActionSchema{
		Description: "Reverts a domain to a `libvirt_snapshot` once, when this resource is created. Changing `triggers` " +
			"(or `snapshot_id`) replaces the resource, which reverts again. Destroying it does nothing on the host.\n\n" +
			"The domain comes back in the state the snapshot recorded: from a memory snapshot running, with the RAM it had " +
			"(processes, files under `/run`); from a disk-only snapshot shut off, with the disks as they were. A " +
			"`libvirt_domain` with `running = true` starts a domain reverted to a shut-off snapshot on its next apply. " +
			"An external snapshot (`quiesce = true` of a running domain) needs libvirt 9.9 or later to revert: an older " +
			"libvirt refuses it with an error before changing anything.",
		ID:       "The snapshot id, `<domain uuid>/<snapshot name>`.",
		Triggers: "Arbitrary values; any change replaces the resource and so reverts again.",
		Attributes: map[string]schema.Attribute{
			"snapshot_id":  tfkit.RequiredReplace("`libvirt_snapshot.x.id`: `<domain uuid or name>/<snapshot name>`.", stringvalidator.RegexMatches(snapshotIDRegexp, "must be <domain uuid or name>/<snapshot name>, e.g. libvirt_snapshot.x.id")),
			"reverted_at":  tfkit.KeptString("When the revert was done, RFC 3339 (UTC)."),
			"domain_state": tfkit.KeptString("The domain's state right after the revert (`running`, `paused`, `shutoff`). Not refreshed."),
		},
	}.Schema(ctx)
}

var snapshotIDRegexp = regexp.MustCompile(`^[^/]+/[^/\s]+$`)

type RevertModel struct {
	tfkit.ActionModel
	SnapshotID  types.String `tfsdk:"snapshot_id"`
	RevertedAt  types.String `tfsdk:"reverted_at"`
	DomainState types.String `tfsdk:"domain_state"`
}

func (m *RevertModel) what() string {
	domain, name, _ := strings.Cut(m.SnapshotID.ValueString(), "/")
	return fmt.Sprintf("revert of domain %s to snapshot %s", domain, name)
}

func (r *RevertResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	tfkit.Create(ctx, req, resp, 10*time.Minute, (*RevertModel).what,
		func(ctx context.Context, plan *RevertModel, d *diag.Diagnostics) (*RevertModel, error) {
			domain, name, _ := strings.Cut(plan.SnapshotID.ValueString(), "/")
			if err := r.Client.RevertSnapshot(ctx, domain, name); err != nil {
				if errors.Is(err, libvirt.ErrNotFound) {
					return nil, fmt.Errorf("the domain or its snapshot does not exist on %s (check snapshot_id): %w", r.Client.URI(), err)
				}
				return nil, err
			}
			st, err := r.Client.GetDomainStatus(ctx, domain)
			if err != nil {
				return nil, fmt.Errorf("reverted, but reading the domain back failed: %w", err)
			}
			plan.ID = types.StringValue(libvirt.UUIDString(st.Domain) + "/" + name)
			plan.RevertedAt = types.StringValue(time.Now().UTC().Format(time.RFC3339))
			plan.DomainState = types.StringValue(st.State)
			return plan, nil
		})
}
