package domain

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// specFromModel is the Spec a model asks for, without resolving volume paths. Unknown
// values read as empty, so that Classify sees them as changes.
func specFromModel(m *Model) domainxml.Spec {
	s := domainxml.Spec{Name: m.Name.ValueString(), UUID: m.UUID.ValueString(), Type: m.Type.ValueString()}
	m = withGroups(m)
	for _, f := range families {
		f.toSpec(m, &s)
	}
	return s
}

// resolve is specFromModel with every reference resolved (disk sources to paths and
// formats, seeds and configs to paths) and what must exist checked, family by family.
func (r *Resource) resolve(ctx context.Context, m *Model) (domainxml.Spec, error) {
	s := specFromModel(m)
	for _, f := range families {
		if f.resolve == nil {
			continue
		}
		if err := f.resolve(ctx, r.Client, &s); err != nil {
			return s, err
		}
	}
	return s, nil
}

// read builds the model from libvirt: the persistent definition for what the user
// controls, the live one for ports and the agent, one quick look for addresses. prior
// (state, or the plan after create/update) supplies what libvirt does not store.
// deferred is the run whose restart was left pending (0: none; pending.go).
func (r *Resource) read(ctx context.Context, id string, prior *Model, deferred int32) (*Model, error) {
	st, err := r.Client.GetDomainStatus(ctx, id)
	if err != nil {
		return nil, err
	}
	var p *domainxml.Parsed
	if prior == nil || isImport(prior) {
		p, err = domainxml.ParseForImport(st.XML) // exact or escaped, decided per device (#25)
	} else {
		p, err = domainxml.ParseKnowing(st.XML, knownStrings(prior.DeviceXML))
	}
	if err != nil {
		return nil, err
	}
	byUsage := secretsByUsage(p.Spec)
	if err := resolveSecretUsages(ctx, r.Client, &p.Spec); err != nil {
		return nil, err
	}
	var live *domainxml.Parsed
	if st.LiveXML != "" {
		if live, err = domainxml.ParseLive(st.LiveXML); err != nil {
			return nil, err
		}
	}
	if prior == nil || isImport(prior) {
		r.importOSDefaults(ctx, &p.Spec)                          // arch.go: import writes os where the domain differs from the host's defaults
		p.Spec.DeviceXML = append(p.Spec.DeviceXML, p.Escaped...) // device_xml.go: what no block types
	} else {
		p.Spec.DeviceXML = presentFragments(knownStrings(prior.DeviceXML), p.Spec.DeviceXML, p.Escaped)
	}
	m := fromSpec(p.Spec, prior)
	m.stamp = StampOf(st, byUsage)
	m.State = types.StringValue(st.State)
	m.Running = types.BoolValue(st.Active)
	m.Autostart = types.BoolValue(st.Autostart)
	m.PendingRestart = types.BoolValue(st.Active && deferred != 0 && st.Domain.ID == deferred)
	m.ConsoleURL = types.StringValue("")
	if live != nil && live.GraphicsPort > 0 {
		m.ConsoleURL = types.StringValue(consoleURL(r.Client.URI(), live.Spec.Graphics, live.GraphicsPort))
	}
	agent := st.Active && p.Spec.QemuAgent && live != nil && live.AgentConnected
	r.lookAddresses(ctx, id, m, st.Active, agent)
	return m, nil
}

func consoleURL(u *libvirt.URI, g domainxml.Graphics, port int) string {
	host := g.Listen
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
		if u != nil && u.Host != "" {
			host = u.Host
		}
	}
	return fmt.Sprintf("%s://%s", g.Type, net.JoinHostPort(host, fmt.Sprint(port)))
}

// fromSpec maps a parsed definition to the model, family by family, reconciled with
// prior so that what the user wrote stays as written (machine aliases, unset maxima,
// volume references).
func fromSpec(s domainxml.Spec, prior *Model) *Model {
	if prior == nil {
		prior = &Model{}
	}
	importing := isImport(prior)
	kept := prior
	prior = withGroups(prior)
	m := &Model{
		ID: types.StringValue(s.UUID), Name: types.StringValue(s.Name), UUID: types.StringValue(s.UUID), Type: types.StringValue(s.Type),
		Shutdown: prior.Shutdown, UpdateMethod: prior.UpdateMethod, WithTimeouts: prior.WithTimeouts,
		RestartOnUpdate: prior.RestartOnUpdate, domainMigrateModel: prior.domainMigrateModel, // as written
	}
	if !tfkit.Known(m.RestartOnUpdate) {
		m.RestartOnUpdate = types.BoolValue(true) // the default (an import, a state from before the attribute)
	}
	if tfkit.Known(prior.UUID) && strings.EqualFold(prior.UUID.ValueString(), s.UUID) {
		m.UUID = prior.UUID // as the user wrote it (libvirt prints lower case)
	}
	m.groupsModel = withGroups(&Model{}).groupsModel
	for _, f := range families {
		f.fromSpec(s, prior, m)
	}
	settleGroups(m, kept, importing)
	if m.Shutdown == nil || m.Shutdown.Timeout.IsUnknown() {
		m.Shutdown = &shutdownModel{Timeout: types.StringValue(defaultShutdownTimeout)}
	}
	if !tfkit.Known(m.UpdateMethod) {
		m.UpdateMethod = types.StringValue(string(domainxml.ChangeNone))
	}
	if m.Timeouts.IsUnknown() {
		m.Timeouts = prior.Timeouts
	}
	return m
}

// fillUnknowns makes a plan storable as state when the domain could not be read back.
func fillUnknowns(m *Model) {
	tfkit.NullIfUnknown(&m.ID, &m.UUID, &m.Type, &m.State, &m.ConsoleURL, &m.UpdateMethod)
	if m.PendingRestart.IsUnknown() {
		m.PendingRestart = types.BoolNull()
	}
	groups := m.groupsModel
	w := withGroups(m)
	for _, f := range families {
		if f.fillUnknowns != nil {
			f.fillUnknowns(w)
		}
	}
	*m = *w
	m.groupsModel = groups // the families changed what the written groups hold, in place
}

// sortAddresses orders addresses IPv4 first, then as text; duplicates dropped.
func sortAddresses(in []string) []string {
	out := slices.Clone(in)
	slices.SortFunc(out, func(a, b string) int {
		a4, b4 := strings.Contains(a, "."), strings.Contains(b, ".")
		if a4 != b4 {
			if a4 {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	return slices.Compact(out)
}

// secretsByUsage is true when a disk of s logs in with a secret named by usage, which a
// read resolves to its UUID through another object (no read stamp then).
func secretsByUsage(s domainxml.Spec) bool {
	for _, d := range s.Disks {
		if n := d.Network; n != nil && n.Auth != nil && n.Auth.SecretID == "" && n.Auth.SecretUsage != "" {
			return true
		}
	}
	return false
}

// ReadIPAddress reads the domain id against c as libvirt_domain's refresh (Read) does, with
// no prior state (as an import), and returns the ip_address it found. The acceptance tests
// time the refresh path with it.
func ReadIPAddress(ctx context.Context, c *libvirt.Client, id string) (string, error) {
	r := &Resource{ResourceBase: tfkit.ResourceBase{Client: c}}
	m, err := r.read(ctx, id, nil, 0)
	if err != nil {
		return "", err
	}
	return m.IPAddress.ValueString(), nil
}
