package tfkit

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// DefaultHost is the name of the host the provider's own `uri` (and ssh, tls,
// max_connections) connects to: the host of every object whose `host` is null.
const DefaultHost = "default"

// HostNamePattern is what a host's name may be: it is part of import ids
// (`<host>/<name>`) and of messages, so no slash, no space.
var HostNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`)

// Hosts is what a configured provider hands every resource and data source: a client
// (one connection pool) per host, by name. A host whose settings could not be turned
// into a client keeps its error, which is reported only to what is placed on it: a
// host that is down or misconfigured fails only its own objects. Clients dial lazily,
// on their first call.
type Hosts struct {
	byName map[string]hostEntry
}

type hostEntry struct {
	client *libvirt.Client
	err    error
	peer   string // the URI other hosts' daemons dial for a migration to it ("": its uri)
}

// NewHosts makes the registry; AddHost fills it.
func NewHosts() *Hosts { return &Hosts{byName: map[string]hostEntry{}} }

// AddHost registers a host's client, or the error its settings gave.
func (h *Hosts) AddHost(name string, c *libvirt.Client, err error) {
	h.byName[name] = hostEntry{client: c, err: err}
}

// SetPeerURI records the URI other hosts' libvirt daemons dial to reach this one (a
// peer-to-peer migration's destination), when it is not the URI the provider uses.
func (h *Hosts) SetPeerURI(name, uri string) {
	if e, ok := h.byName[name]; ok {
		e.peer = uri
		h.byName[name] = e
	}
}

// PeerURI is the URI a migration to the host named name dials: its peer_uri, else ""
// (the host's own uri).
func (h *Hosts) PeerURI(name string) string { return h.byName[name].peer }

// Names are the hosts' names, sorted ("default" among them).
func (h *Hosts) Names() []string {
	out := make([]string, 0, len(h.byName))
	for n := range h.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Has is true when the provider has a host of that name (whether or not it works).
func (h *Hosts) Has(name string) bool {
	_, ok := h.byName[name]
	return ok
}

// Client is the client of the host named name ("" is the default host).
func (h *Hosts) Client(name string) (*libvirt.Client, error) {
	if name == "" {
		name = DefaultHost
	}
	e, ok := h.byName[name]
	if !ok {
		return nil, fmt.Errorf("the provider has no host %q: its hosts are %s (add it to the provider's `hosts`, or set `host` to one of them)",
			name, strings.Join(h.Names(), ", "))
	}
	if e.err != nil {
		return nil, fmt.Errorf("host %q: %w", name, e.err)
	}
	return e.client, nil
}

// HostName is the host an object's `host` value names: the default host when null.
func HostName(v interface {
	IsNull() bool
	IsUnknown() bool
	ValueString() string
}) string {
	if v.IsNull() || v.IsUnknown() || v.ValueString() == "" {
		return DefaultHost
	}
	return v.ValueString()
}

type hostKey struct{}

// WithHost is ctx carrying the name of the host a request is for. The protocol server
// puts it there from the request's `host` value before the framework configures the
// resource (or data source) that answers it; ResourceBase.Configure picks its client by
// it. So every CRUD method talks to its object's host without asking.
func WithHost(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, hostKey{}, name)
}

// unknownHostKey marks a request whose `host` is not known yet (WithUnknownHost).
type unknownHostKey struct{}

// WithUnknownHost is ctx for a plan whose object's `host` comes from something not known
// until apply: resources then get no client (clientFor), so that no plan-time check asks
// a host the object may not be placed on; every check runs when Terraform plans the object
// again at apply, with the host known. Plan-time code treats a nil client as a host it
// cannot ask (an unreachable one) already.
func WithUnknownHost(ctx context.Context) context.Context {
	return context.WithValue(ctx, unknownHostKey{}, true)
}

// HostUnknown says whether WithUnknownHost marked ctx.
func HostUnknown(ctx context.Context) bool {
	v, _ := ctx.Value(unknownHostKey{}).(bool)
	return v
}

// HostFrom is the host name WithHost put in ctx, DefaultHost when none.
func HostFrom(ctx context.Context) string {
	if n, ok := ctx.Value(hostKey{}).(string); ok && n != "" {
		return n
	}
	return DefaultHost
}

// clientFor is the shared Configure of every resource and data source: quiet when the
// provider is not configured yet (Terraform calls Configure before that, e.g. to
// validate), a clear error when ProviderData is not the provider's hosts or the request's
// host is not one of them.
func clientFor(ctx context.Context, data any, d *diag.Diagnostics, kind string) (*Hosts, *libvirt.Client) {
	if data == nil {
		return nil, nil
	}
	hosts, ok := data.(*Hosts)
	if !ok {
		d.AddError("Unexpected "+kind+" Configure Type",
			fmt.Sprintf("Expected *tfkit.Hosts, got: %T. Please report this issue to the provider developers.", data))
		return nil, nil
	}
	if HostUnknown(ctx) {
		return hosts, nil
	}
	c, err := hosts.Client(HostFrom(ctx))
	if err != nil {
		d.AddError("libvirt host unavailable", err.Error())
		return hosts, nil
	}
	return hosts, c
}
