package domain

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
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
)

// A disk's network_source: an image QEMU reaches over the network itself.

type diskNetworkModel struct {
	Protocol types.String       `tfsdk:"protocol"`
	Name     types.String       `tfsdk:"name"`
	Hosts    []diskNetHostModel `tfsdk:"hosts"`
	Auth     *diskAuthModel     `tfsdk:"auth"`
}

type diskNetHostModel struct {
	Name types.String `tfsdk:"name"`
	Port types.Int64  `tfsdk:"port"`
}

type diskAuthModel struct {
	Username    types.String `tfsdk:"username"`
	SecretID    types.String `tfsdk:"secret_id"`
	SecretUsage types.String `tfsdk:"secret_usage"`
}

var networkSourceAttribute = schema.SingleNestedAttribute{
	MarkdownDescription: "A disk on the network instead of a file: an rbd image, an iSCSI LUN, an NBD export or an image on an " +
		"HTTP(S) server (read-only for QEMU: use it as a cdrom or a `read_only` disk). Changing it restarts a running domain.",
	Optional: true,
	Attributes: map[string]schema.Attribute{
		"protocol": schema.StringAttribute{MarkdownDescription: "`rbd`, `iscsi`, `nbd`, `http` or `https`.", Required: true,
			Validators: []validator.String{stringvalidator.OneOf(domainxml.NetworkProtocols...)}},
		"name": tfkit.OptionalString("The image: `<pool>/<image>` (rbd), `<target iqn>/<lun>` (iscsi), the export name (nbd; " +
			"empty for the default export), the path on the server (http, https)."),
		"hosts": schema.ListNestedAttribute{
			MarkdownDescription: "The servers: several Ceph monitors for rbd (or none: QEMU then reads them from the host's `ceph.conf`), one server otherwise.",
			Optional:            true,
			Validators:          []validator.List{listvalidator.SizeAtLeast(1)},
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"name": schema.StringAttribute{MarkdownDescription: "Host name or address.", Required: true,
					Validators: []validator.String{stringvalidator.LengthAtLeast(1)}},
				"port": schema.Int64Attribute{MarkdownDescription: "Port; default the protocol's own (6789, 3260, 10809, 80, 443), which reads back (and imports) as left out.",
					Optional: true, Validators: []validator.Int64{int64validator.Between(1, 65535)}},
			}},
		},
		"auth": schema.SingleNestedAttribute{
			MarkdownDescription: "rbd and iscsi: the user QEMU logs in as, and the `libvirt_secret` holding its key " +
				"(`usage_type` `ceph` or `iscsi`).",
			Optional: true,
			Attributes: map[string]schema.Attribute{
				"username": schema.StringAttribute{MarkdownDescription: "The user (e.g. `libvirt` for Ceph's client.libvirt).", Required: true},
				"secret_id": schema.StringAttribute{MarkdownDescription: "The secret's UUID, e.g. `libvirt_secret.ceph.id`. " +
					"A definition that names its secret by usage (as virsh users may write it) reads, and imports, as that secret's UUID.", Required: true,
					Validators: []validator.String{stringvalidator.RegexMatches(validators.UUIDRegexp, "must be a libvirt secret's UUID")}},
				"secret_usage": tfkit.OptionalString("Name the secret in the definition by this usage name (e.g. `client.libvirt secret`), "+
					"as virsh users write it, instead of by its UUID: it must be the usage of the secret `secret_id` names (checked at apply). "+
					"Import writes it for a domain that names its secret that way, so that the definition stays as it is. "+
					"Taken into the definition whenever the disk is written.", stringvalidator.LengthAtLeast(1)),
			},
		},
	},
}

func (n *diskNetworkModel) toSpec() *domainxml.NetworkSource {
	if n == nil {
		return nil
	}
	s := &domainxml.NetworkSource{Protocol: n.Protocol.ValueString(), Name: n.Name.ValueString()}
	for _, h := range n.Hosts {
		s.Hosts = append(s.Hosts, domainxml.NetworkHost{Name: h.Name.ValueString(), Port: uint(h.Port.ValueInt64())})
	}
	if a := n.Auth; a != nil {
		s.Auth = &domainxml.DiskAuth{Username: a.Username.ValueString(), SecretID: a.SecretID.ValueString(), SecretUsage: a.SecretUsage.ValueString()}
	}
	return s
}

// diskNetworkFromSpec is n as the model has it; prior keeps what the configuration wrote
// (a secret id's case, a default port left out).
func diskNetworkFromSpec(n *domainxml.NetworkSource, prior *diskNetworkModel) *diskNetworkModel {
	if n == nil {
		return nil
	}
	m := &diskNetworkModel{Protocol: types.StringValue(n.Protocol), Name: tfkit.StringOrNull(n.Name)}
	for i, h := range n.Hosts {
		hm := diskNetHostModel{Name: types.StringValue(h.Name), Port: types.Int64Null()}
		// The protocol's default port (which libvirt writes in for http and https) reads as
		// left out, unless the configuration spelled it out.
		written := prior != nil && i < len(prior.Hosts) && tfkit.Known(prior.Hosts[i].Port)
		if h.Port != 0 && (h.Port != domainxml.DefaultPort(n.Protocol) || written) {
			hm.Port = types.Int64Value(int64(h.Port))
		}
		m.Hosts = append(m.Hosts, hm)
	}
	if a := n.Auth; a != nil {
		m.Auth = &diskAuthModel{Username: types.StringValue(a.Username), SecretID: types.StringValue(a.SecretID), SecretUsage: tfkit.StringOrNull(a.SecretUsage)}
		if prior != nil && prior.Auth != nil && strings.EqualFold(prior.Auth.SecretID.ValueString(), a.SecretID) {
			m.Auth.SecretID = prior.Auth.SecretID
		}
		// secret_usage is how the configuration wants the secret named; a definition that
		// names it by usage while the configuration does not (adopted before the attribute
		// was, say) reads as the configuration has it, and is written by UUID next time.
		if prior != nil && prior.Auth != nil && !prior.Auth.SecretUsage.IsUnknown() {
			m.Auth.SecretUsage = prior.Auth.SecretUsage
		}
	}
	return m
}

// checkSecretUsages: a secret_usage must name the secret secret_id names (libvirt takes
// the usage and would never look at the UUID).
func checkSecretUsages(ctx context.Context, c *libvirt.Client, s *domainxml.Spec) error {
	for i, d := range s.Disks {
		n := d.Network
		if n == nil || n.Auth == nil || n.Auth.SecretUsage == "" || n.Auth.SecretID == "" || domainxml.SecretTypeFor(n.Protocol) == "" {
			continue
		}
		id, err := c.SecretByUsage(ctx, domainxml.SecretTypeFor(n.Protocol), n.Auth.SecretUsage)
		switch {
		case errors.Is(err, libvirt.ErrNotFound):
			return fmt.Errorf("disk %d: no %s secret has the usage %q (secret_usage)", i, domainxml.SecretTypeFor(n.Protocol), n.Auth.SecretUsage)
		case err != nil:
			return err
		case !strings.EqualFold(id, n.Auth.SecretID):
			return fmt.Errorf("disk %d: the secret with the usage %q (secret_usage) is %s, not secret_id %s", i, n.Auth.SecretUsage, id, n.Auth.SecretID)
		}
	}
	return nil
}

// resolveSecretUsages gives every network disk whose <auth> names its secret by usage
// (as virsh users write it) that secret's UUID, which is what secret_id holds: without
// it an imported domain would read as secret_id "", which no configuration may write.
// A secret the host lacks stays unresolved (the domain could not start either).
func resolveSecretUsages(ctx context.Context, c *libvirt.Client, s *domainxml.Spec) error {
	for _, d := range s.Disks {
		n := d.Network
		if n == nil || n.Auth == nil || n.Auth.SecretID != "" || n.Auth.SecretUsage == "" || domainxml.SecretTypeFor(n.Protocol) == "" {
			continue
		}
		id, err := c.SecretByUsage(ctx, domainxml.SecretTypeFor(n.Protocol), n.Auth.SecretUsage)
		switch {
		case errors.Is(err, libvirt.ErrNotFound):
		case err != nil:
			return err
		default:
			n.Auth.SecretID = id
		}
	}
	return nil
}

// validateDiskNetworks checks every known network_source at plan time: auth only where
// the protocol takes one, one host but for rbd, an image name.
func validateDiskNetworks(m *Model, diags *diag.Diagnostics) {
	for i, d := range m.Disks {
		checkDiskSources(m, i, d, diags)
		n := d.Network
		if n == nil || !n.allKnown() {
			continue
		}
		if err := domainxml.ValidateNetworkSource(fmt.Sprintf("libvirt_domain %s, disk %d", m.Name.ValueString(), i), n.toSpec()); err != nil {
			diags.AddAttributeError(path.Root("disk").AtListIndex(i).AtName("network_source"), "Invalid network_source", err.Error())
		}
	}
}

// allKnown reports whether every value of n is known (a configuration may leave some to
// the apply).
func (n *diskNetworkModel) allKnown() bool {
	if n.Protocol.IsUnknown() || n.Name.IsUnknown() || (n.Auth != nil && (n.Auth.Username.IsUnknown() || n.Auth.SecretID.IsUnknown())) {
		return false
	}
	for _, h := range n.Hosts {
		if h.Name.IsUnknown() || h.Port.IsUnknown() {
			return false
		}
	}
	return true
}

// checkDiskSources: a disk names its source exactly once (the framework's ExactlyOneOf
// spells the paths oddly inside a block list).
func checkDiskSources(m *Model, i int, d diskModel, diags *diag.Diagnostics) {
	var set []string
	unknown := false
	for _, s := range []struct {
		name          string
		null, unknown bool
	}{{"volume_id", d.VolumeID.IsNull(), d.VolumeID.IsUnknown()}, {"path", d.Path.IsNull(), d.Path.IsUnknown()},
		{"network_source", d.Network == nil, false}} {
		unknown = unknown || s.unknown
		if !s.null {
			set = append(set, s.name)
		}
	}
	at := path.Root("disk").AtListIndex(i)
	switch {
	case len(set) > 1:
		diags.AddAttributeError(at, "A disk has more than one source", fmt.Sprintf("libvirt_domain %s: disk %d sets %s: keep one of them.",
			m.Name.ValueString(), i, strings.Join(set, " and ")))
	case len(set) == 0 && !unknown:
		diags.AddAttributeError(at, "A disk has no source", fmt.Sprintf("libvirt_domain %s: disk %d needs one of volume_id, path and network_source.",
			m.Name.ValueString(), i))
	}
}
