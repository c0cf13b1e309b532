package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit/validators"
)

// hostModel is one entry of the provider's `hosts`: the same settings as the provider's
// own, for another libvirt host.
type hostModel struct {
	URI            types.String `tfsdk:"uri"`
	PeerURI        types.String `tfsdk:"peer_uri"`
	MaxConnections types.Int64  `tfsdk:"max_connections"`
	SSH            *sshModel    `tfsdk:"ssh"`
	TLS            *tlsModel    `tfsdk:"tls"`
}

func hostsAttribute() schema.Attribute {
	return schema.MapNestedAttribute{
		MarkdownDescription: "More libvirt hosts, by name, for one configuration to manage many: each object's `host` names the one it " +
			"lives on (null: the host this provider's own `uri` names, called `default`). Each host has its own connection pool; " +
			"a host that is down or misconfigured fails only what is placed on it. `ssh` and `tls` settings a host leaves unset " +
			"come from the provider's own (then their environment variables). See the many-hosts guide.",
		Optional: true,
		Validators: []validator.Map{
			mapvalidator.KeysAre(
				stringvalidator.RegexMatches(tfkit.HostNamePattern, "must be a host name: letters, digits, `_`, `.` and `-`, starting with a letter or digit, at most 63 characters"),
				stringvalidator.NoneOf(tfkit.DefaultHost),
			),
		},
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"uri": schema.StringAttribute{
				MarkdownDescription: "The host's libvirt connection URI, as the provider's `uri`.",
				Required:            true,
				Validators:          []validator.String{validators.URI()},
			},
			"peer_uri": peerURIAttribute(),
			"max_connections": schema.Int64Attribute{
				MarkdownDescription: "Size of this host's connection pool. Defaults to the provider's `max_connections`.",
				Optional:            true,
				Validators:          []validator.Int64{int64validator.Between(1, 64)},
			},
			"ssh": schema.SingleNestedAttribute{
				MarkdownDescription: "As the provider's `ssh` block, for this host; unset fields are the provider's.",
				Optional:            true,
				Attributes:          sshAttributes(),
			},
			"tls": schema.SingleNestedAttribute{
				MarkdownDescription: "As the provider's `tls` block, for this host; unset fields are the provider's.",
				Optional:            true,
				Attributes:          tlsAttributes(),
			},
		}},
	}
}

// configureHosts is every host's client: the provider's own settings (base) are the
// host `default`; each of `hosts` is base with what it sets. A host whose settings give no
// client keeps its error for the objects placed on it; unknown settings are the only
// errors for the whole provider (Terraform must know them to connect at all).
func configureHosts(base libvirt.Config, basePeer string, hosts map[string]hostModel) (*tfkit.Hosts, []string, []tfkit.DiagError) {
	out := tfkit.NewHosts()
	var warnings []string
	var errs []tfkit.DiagError
	add := func(name string, cfg libvirt.Config) {
		c, err := libvirt.NewClient(cfg)
		if err == nil {
			for _, w := range c.Warnings {
				warnings = append(warnings, fmt.Sprintf("host %q: %s", name, w))
			}
		}
		out.AddHost(name, c, err)
	}
	add(tfkit.DefaultHost, base)
	out.SetPeerURI(tfkit.DefaultHost, basePeer)
	for name, h := range hosts {
		cfg, hostErrs := h.overlay(base, path.Root("hosts").AtMapKey(name))
		errs = append(errs, hostErrs...)
		add(name, cfg)
		if h.PeerURI.IsUnknown() {
			errs = append(errs, tfkit.UnknownErr(path.Root("hosts").AtMapKey(name).AtName("peer_uri")))
		}
		out.SetPeerURI(name, h.PeerURI.ValueString())
	}
	return out, warnings, errs
}

// overlay is base with what the host sets.
func (h hostModel) overlay(base libvirt.Config, p path.Path) (libvirt.Config, []tfkit.DiagError) {
	var errs []tfkit.DiagError
	cfg := base
	str := func(v types.String, into *string, at path.Path) {
		switch {
		case v.IsUnknown():
			errs = append(errs, tfkit.UnknownErr(at))
		case !v.IsNull():
			*into = v.ValueString()
		}
	}
	boolean := func(v types.Bool, into *bool, at path.Path) {
		switch {
		case v.IsUnknown():
			errs = append(errs, tfkit.UnknownErr(at))
		case !v.IsNull():
			*into = v.ValueBool()
		}
	}
	str(h.URI, &cfg.URI, p.AtName("uri"))
	switch {
	case h.MaxConnections.IsUnknown():
		errs = append(errs, tfkit.UnknownErr(p.AtName("max_connections")))
	case !h.MaxConnections.IsNull():
		cfg.MaxConnections = int(h.MaxConnections.ValueInt64())
	}
	if s := h.SSH; s != nil {
		at := p.AtName("ssh")
		str(s.Username, &cfg.SSH.Username, at.AtName("username"))
		str(s.PrivateKey, &cfg.SSH.PrivateKey, at.AtName("private_key"))
		str(s.PrivateKeyFile, &cfg.SSH.PrivateKeyFile, at.AtName("private_key_file"))
		str(s.Password, &cfg.SSH.Password, at.AtName("password"))
		str(s.KnownHosts, &cfg.SSH.KnownHosts, at.AtName("known_hosts"))
		str(s.KnownHostsFile, &cfg.SSH.KnownHostsFile, at.AtName("known_hosts_file"))
		boolean(s.InsecureSkipHostKeyVerification, &cfg.SSH.InsecureSkipHostKeyVerification, at.AtName("insecure_skip_host_key_verification"))
	}
	if t := h.TLS; t != nil {
		at := p.AtName("tls")
		str(t.CAFile, &cfg.TLS.CAFile, at.AtName("ca_file"))
		str(t.CertFile, &cfg.TLS.CertFile, at.AtName("cert_file"))
		str(t.KeyFile, &cfg.TLS.KeyFile, at.AtName("key_file"))
		boolean(t.InsecureSkipVerify, &cfg.TLS.InsecureSkipVerify, at.AtName("insecure_skip_verify"))
	}
	return cfg, errs
}

// hostsOf decodes the `hosts` map (nil when null).
func hostsOf(ctx context.Context, v types.Map) (map[string]hostModel, []tfkit.DiagError) {
	if v.IsNull() {
		return nil, nil
	}
	if v.IsUnknown() {
		return nil, []tfkit.DiagError{tfkit.UnknownErr(path.Root("hosts"))}
	}
	out := map[string]hostModel{}
	if d := v.ElementsAs(ctx, &out, false); d.HasError() {
		return nil, []tfkit.DiagError{{Path: path.Root("hosts"), Summary: "Invalid hosts", Detail: tfkit.DiagsErr(d).Error()}}
	}
	return out, nil
}

// peerURIAttribute is `peer_uri`, the provider's (for the host `default`) and each host's.
func peerURIAttribute() schema.StringAttribute {
	return schema.StringAttribute{
		MarkdownDescription: "The URI the other hosts' libvirt daemons use to reach this host's, when a domain migrates to it " +
			"(peer to peer: the source host's daemon dials it, not Terraform), e.g. `qemu+tls://10.0.0.2/system` on a private " +
			"network. Default: the host's `uri`, which must then work from the other hosts too.",
		Optional:   true,
		Validators: []validator.String{validators.URI()},
	}
}
