// Package provider is the Terraform / OpenTofu provider for libvirt: its configuration,
// resources, data sources and functions.
package provider

import (
	"context"
	"os"
	"strconv"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit/validators"
)

// Address is the provider's registry address.
const Address = "registry.terraform.io/kvmforge/libvirt"

var (
	_ provider.Provider              = (*libvirtProvider)(nil)
	_ provider.ProviderWithFunctions = (*libvirtProvider)(nil)
)

type libvirtProvider struct {
	version string
	// hosts are the configured hosts' clients, for the protocol server's refresh
	// shortcut (server_read.go); nil until ConfigureProvider.
	hosts *tfkit.Hosts
}

// New returns a constructor of the provider, as providerserver and tests want it.
func New(version string) func() provider.Provider {
	return func() provider.Provider { return &libvirtProvider{version: version} }
}

type providerModel struct {
	URI            types.String `tfsdk:"uri"`
	MaxConnections types.Int64  `tfsdk:"max_connections"`
	SSH            *sshModel    `tfsdk:"ssh"`
	TLS            *tlsModel    `tfsdk:"tls"`
	Hosts          types.Map    `tfsdk:"hosts"`
	PeerURI        types.String `tfsdk:"peer_uri"`
}

type sshModel struct {
	Username                        types.String `tfsdk:"username"`
	PrivateKey                      types.String `tfsdk:"private_key"`
	PrivateKeyFile                  types.String `tfsdk:"private_key_file"`
	Password                        types.String `tfsdk:"password"`
	KnownHosts                      types.String `tfsdk:"known_hosts"`
	KnownHostsFile                  types.String `tfsdk:"known_hosts_file"`
	InsecureSkipHostKeyVerification types.Bool   `tfsdk:"insecure_skip_host_key_verification"`
}

type tlsModel struct {
	CAFile             types.String `tfsdk:"ca_file"`
	CertFile           types.String `tfsdk:"cert_file"`
	KeyFile            types.String `tfsdk:"key_file"`
	InsecureSkipVerify types.Bool   `tfsdk:"insecure_skip_verify"`
}

func (p *libvirtProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "libvirt"
	resp.Version = p.version
}

func (p *libvirtProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Manages KVM/QEMU hosts through libvirt: volumes, cloud-init seeds, domains, snapshots, clones, " +
			"networks and pools. One pool of connections per URI is shared by every resource of a provider instance.",
		Attributes: map[string]schema.Attribute{
			"uri": schema.StringAttribute{
				MarkdownDescription: "libvirt connection URI, e.g. `qemu:///system`, `qemu+ssh://root@host/system`, " +
					"`qemu+tcp://host/system`, `qemu+tls://host/system`, `test:///default`. Query parameters as libvirt spells them: " +
					"`socket`, `keyfile`, `known_hosts`, `known_hosts_verify` (`normal`, `ignore`), `sshauth` (e.g. `privkey,agent`), `no_verify`, " +
					"`pkipath`, `name`; see the connecting guide. Defaults to `LIBVIRT_DEFAULT_URI`, then `qemu:///system`.",
				Optional:   true,
				Validators: []validator.String{validators.URI()},
			},
			"max_connections": schema.Int64Attribute{
				MarkdownDescription: "Size of the shared connection pool for this URI: at most this many libvirt calls run at once. " +
					"Defaults to `LIBVIRT_MAX_CONNECTIONS`, then 4.",
				Optional:   true,
				Validators: []validator.Int64{int64validator.Between(1, 64)},
			},
			"hosts":    hostsAttribute(),
			"peer_uri": peerURIAttribute(),
		},
		Blocks: map[string]schema.Block{
			"ssh": schema.SingleNestedBlock{
				MarkdownDescription: sshDescription,
				Attributes:          sshAttributes(),
			},
			"tls": schema.SingleNestedBlock{
				MarkdownDescription: tlsDescription,
				Attributes:          tlsAttributes(),
			},
		},
	}
}

func (p *libvirtProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var m providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if m.SSH == nil {
		m.SSH = &sshModel{}
	}
	if m.TLS == nil {
		m.TLS = &tlsModel{}
	}
	cfg, errs := m.toConfig()
	tfkit.AppendErrs(&resp.Diagnostics, errs)
	named, errs := hostsOf(ctx, m.Hosts)
	tfkit.AppendErrs(&resp.Diagnostics, errs)
	if resp.Diagnostics.HasError() {
		return
	}
	if m.PeerURI.IsUnknown() {
		tfkit.AppendErrs(&resp.Diagnostics, []tfkit.DiagError{tfkit.UnknownErr(path.Root("peer_uri"))})
	}
	hosts, warnings, errs := configureHosts(cfg, m.PeerURI.ValueString(), named)
	tfkit.AppendErrs(&resp.Diagnostics, errs)
	// The provider's own settings failing is the configuration's error, as it always was;
	// a named host's is reported to what is placed on it (hosts.go).
	if _, err := hosts.Client(tfkit.DefaultHost); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("uri"), "Unable to configure the libvirt provider", err.Error())
	}
	if resp.Diagnostics.HasError() {
		return
	}
	for _, w := range warnings {
		resp.Diagnostics.AddWarning("Insecure libvirt connection", w)
	}
	resp.DataSourceData = hosts
	resp.ResourceData = hosts
	p.hosts = hosts
}

// toConfig resolves configuration, then environment, then defaults.
func (m *providerModel) toConfig() (libvirt.Config, []tfkit.DiagError) {
	var errs []tfkit.DiagError
	str := func(v types.String, p path.Path, env string) string {
		if v.IsUnknown() {
			errs = append(errs, tfkit.UnknownErr(p))
			return ""
		}
		if !v.IsNull() {
			return v.ValueString()
		}
		return os.Getenv(env)
	}
	boolean := func(v types.Bool, p path.Path, env string) bool {
		if v.IsUnknown() {
			errs = append(errs, tfkit.UnknownErr(p))
			return false
		}
		if !v.IsNull() {
			return v.ValueBool()
		}
		b, _ := strconv.ParseBool(os.Getenv(env))
		return b
	}
	cfg := libvirt.Config{
		URI: str(m.URI, path.Root("uri"), "LIBVIRT_DEFAULT_URI"),
		SSH: libvirt.SSHConfig{
			Username:                        str(m.SSH.Username, path.Root("ssh").AtName("username"), "LIBVIRT_SSH_USERNAME"),
			PrivateKey:                      str(m.SSH.PrivateKey, path.Root("ssh").AtName("private_key"), "LIBVIRT_SSH_PRIVATE_KEY"),
			PrivateKeyFile:                  str(m.SSH.PrivateKeyFile, path.Root("ssh").AtName("private_key_file"), "LIBVIRT_SSH_PRIVATE_KEY_FILE"),
			Password:                        str(m.SSH.Password, path.Root("ssh").AtName("password"), "LIBVIRT_SSH_PASSWORD"),
			KnownHosts:                      str(m.SSH.KnownHosts, path.Root("ssh").AtName("known_hosts"), "LIBVIRT_SSH_KNOWN_HOSTS"),
			KnownHostsFile:                  str(m.SSH.KnownHostsFile, path.Root("ssh").AtName("known_hosts_file"), "LIBVIRT_SSH_KNOWN_HOSTS_FILE"),
			InsecureSkipHostKeyVerification: boolean(m.SSH.InsecureSkipHostKeyVerification, path.Root("ssh").AtName("insecure_skip_host_key_verification"), "LIBVIRT_SSH_INSECURE_SKIP_HOST_KEY_VERIFICATION"),
		},
		TLS: libvirt.TLSConfig{
			CAFile:             str(m.TLS.CAFile, path.Root("tls").AtName("ca_file"), "LIBVIRT_TLS_CA_FILE"),
			CertFile:           str(m.TLS.CertFile, path.Root("tls").AtName("cert_file"), "LIBVIRT_TLS_CERT_FILE"),
			KeyFile:            str(m.TLS.KeyFile, path.Root("tls").AtName("key_file"), "LIBVIRT_TLS_KEY_FILE"),
			InsecureSkipVerify: boolean(m.TLS.InsecureSkipVerify, path.Root("tls").AtName("insecure_skip_verify"), "LIBVIRT_TLS_INSECURE_SKIP_VERIFY"),
		},
	}
	if cfg.URI == "" {
		cfg.URI = "qemu:///system"
	}
	switch {
	case m.MaxConnections.IsUnknown():
		errs = append(errs, tfkit.UnknownErr(path.Root("max_connections")))
	case !m.MaxConnections.IsNull():
		cfg.MaxConnections = int(m.MaxConnections.ValueInt64())
	default:
		if v := os.Getenv("LIBVIRT_MAX_CONNECTIONS"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 64 {
				errs = append(errs, tfkit.DiagError{Path: path.Root("max_connections"), Summary: "Invalid LIBVIRT_MAX_CONNECTIONS",
					Detail: "LIBVIRT_MAX_CONNECTIONS=" + strconv.Quote(v) + " must be a whole number from 1 to 64."})
			} else {
				cfg.MaxConnections = n
			}
		}
	}
	return cfg, errs
}

const sshDescription = "Credentials and host-key checking for `qemu+ssh://` URIs. Host keys are verified against " +
	"known_hosts by default: an unknown or changed key is an error naming the host and the key's fingerprint."

const tlsDescription = "Certificates for `qemu+tls://` URIs. Unset files come from the URI's `pkipath`, then " +
	"libvirt's defaults (`/etc/pki/CA/cacert.pem`, `/etc/pki/libvirt/clientcert.pem`, `/etc/pki/libvirt/private/clientkey.pem`)."

// sshAttributes are the ssh block's, and each host's `ssh`.
func sshAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"username": schema.StringAttribute{
			MarkdownDescription: "SSH user when the URI names none. Env `LIBVIRT_SSH_USERNAME`; default: the current user.",
			Optional:            true,
		},
		"private_key": schema.StringAttribute{
			MarkdownDescription: "Private key content (PEM or OpenSSH format, unencrypted). Env `LIBVIRT_SSH_PRIVATE_KEY`. Wins over `password` when both are set.",
			Optional:            true,
			Sensitive:           true,
		},
		"private_key_file": schema.StringAttribute{
			MarkdownDescription: "Path of a private key file (same as the URI's `keyfile`). Env `LIBVIRT_SSH_PRIVATE_KEY_FILE`. " +
				"Without any key, `~/.ssh/id_ed25519`, `id_ecdsa`, `id_rsa` and a running ssh-agent are tried.",
			Optional: true,
		},
		"password": schema.StringAttribute{
			MarkdownDescription: "Password (also answers keyboard-interactive prompts). Env `LIBVIRT_SSH_PASSWORD`.",
			Optional:            true,
			Sensitive:           true,
		},
		"known_hosts": schema.StringAttribute{
			MarkdownDescription: "known_hosts content to verify the host key against, e.g. from `ssh-keyscan`. Env `LIBVIRT_SSH_KNOWN_HOSTS`.",
			Optional:            true,
		},
		"known_hosts_file": schema.StringAttribute{
			MarkdownDescription: "known_hosts file (same as the URI's `known_hosts`). Env `LIBVIRT_SSH_KNOWN_HOSTS_FILE`; default `~/.ssh/known_hosts`.",
			Optional:            true,
		},
		"insecure_skip_host_key_verification": schema.BoolAttribute{
			MarkdownDescription: "Accept any host key (same as the URI's `no_verify=1`). Default `false`. When true the provider " +
				"connects and says so in a warning on every run. Env `LIBVIRT_SSH_INSECURE_SKIP_HOST_KEY_VERIFICATION`.",
			Optional: true,
		},
	}
}

// tlsAttributes are the tls block's, and each host's `tls`.
func tlsAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"ca_file":   schema.StringAttribute{MarkdownDescription: "CA certificate (PEM). Env `LIBVIRT_TLS_CA_FILE`.", Optional: true},
		"cert_file": schema.StringAttribute{MarkdownDescription: "Client certificate (PEM). Env `LIBVIRT_TLS_CERT_FILE`.", Optional: true},
		"key_file":  schema.StringAttribute{MarkdownDescription: "Client private key (PEM). Env `LIBVIRT_TLS_KEY_FILE`.", Optional: true},
		"insecure_skip_verify": schema.BoolAttribute{
			MarkdownDescription: "Do not verify the server certificate (same as `no_verify=1`). Default `false`; a warning says so when set.",
			Optional:            true,
		},
	}
}
