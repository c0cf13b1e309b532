package domain

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// refreshAgentDeadline bounds the one question a refresh asks the guest agent.
const refreshAgentDeadline = time.Second

// lookAddresses fills every interface's addresses and ip_address with one quick look:
// the DHCP leases of each network (one call per network) and, for a running domain whose
// agent channel is connected, the guest agent with a one-second deadline. It never
// waits; an interface with nothing found keeps the addresses it had.
func (r *Resource) lookAddresses(ctx context.Context, id string, m *Model, active, agent bool) {
	found := map[string][]string{} // by MAC
	if active {
		seen := map[string]bool{}
		for _, n := range m.Interfaces {
			net := n.Network.ValueString()
			if net == "" || seen[net] {
				continue
			}
			seen[net] = true
			leases, err := r.Client.NetworkLeases(ctx, net)
			if err != nil {
				tflog.Debug(ctx, "no DHCP leases", map[string]any{"network": net, "error": err.Error()})
				continue
			}
			for mac, ls := range leases {
				for _, l := range ls {
					found[mac] = append(found[mac], l.IP)
				}
			}
		}
		if agent {
			actx, cancel := context.WithTimeout(ctx, refreshAgentDeadline)
			addrs, err := r.Client.AgentAddresses(actx, id)
			cancel()
			if err != nil {
				tflog.Debug(ctx, "guest agent gave no addresses", map[string]any{"domain": id, "error": err.Error()})
			}
			for mac, as := range addrs {
				for _, a := range as {
					found[mac] = append(found[mac], a.IP)
				}
			}
		}
	}
	m.IPAddress = types.StringValue("")
	for i := range m.Interfaces {
		n := &m.Interfaces[i]
		var usable []string
		for _, ip := range found[strings.ToLower(n.MAC.ValueString())] {
			if libvirt.UsableAddress(ip) {
				usable = append(usable, ip)
			}
		}
		switch {
		case len(usable) > 0:
			n.Addresses = tfkit.StringList(sortAddresses(usable))
		case !active:
			n.Addresses = tfkit.StringList(nil) // a stopped domain has no address
		case n.Addresses.IsNull() || n.Addresses.IsUnknown():
			n.Addresses = tfkit.StringList(nil)
		}
		if m.IPAddress.ValueString() == "" {
			for _, v := range n.Addresses.Elements() {
				if s, ok := v.(types.String); ok && strings.Contains(s.ValueString(), ".") {
					m.IPAddress = s
					break
				}
			}
		}
	}
}

// waitForIPs waits, for every interface with a wait_for_ip block, until it has a usable
// address from its source. Only Create and Update call it.
func (r *Resource) waitForIPs(ctx context.Context, id string, plan *Model) error {
	type want struct {
		index   int
		network string
		source  string
		timeout time.Duration
	}
	var wants []want
	for i, n := range plan.Interfaces {
		if n.WaitForIP == nil {
			continue
		}
		w := want{index: i, network: n.Network.ValueString(), source: defaultWaitSource, timeout: defaultWaitTimeout}
		if tfkit.Known(n.WaitForIP.Source) {
			w.source = n.WaitForIP.Source.ValueString()
		}
		if tfkit.Known(n.WaitForIP.Timeout) {
			d, err := time.ParseDuration(n.WaitForIP.Timeout.ValueString())
			if err != nil {
				return fmt.Errorf("network_interface %d: wait_for_ip.timeout: %w", i, err)
			}
			w.timeout = d
		}
		wants = append(wants, w)
	}
	if len(wants) == 0 {
		return nil
	}
	// The MACs: libvirt chose those the user left out.
	st, err := r.Client.GetDomainStatus(ctx, id)
	if err != nil {
		return err
	}
	p, err := domainxml.Parse(st.XML)
	if err != nil {
		return err
	}
	name := p.Spec.Name
	start := time.Now()
	for _, w := range wants {
		if w.index >= len(p.Spec.Interfaces) {
			continue
		}
		mac := p.Spec.Interfaces[w.index].MAC
		deadline := start.Add(w.timeout)
		delay := time.Second
		for {
			ip := r.pollAddress(ctx, id, mac, w.network, w.source)
			if ip != "" {
				tflog.Info(ctx, "domain interface has an address", map[string]any{"domain": name, "mac": mac, "ip": ip, "after": time.Since(start).String()})
				break
			}
			if time.Now().Add(delay).After(deadline) {
				return fmt.Errorf("domain %s: network interface %s (MAC %s) got no IP address from %s within %s. The domain "+
					"was created and stays in state; check that the guest takes an address on that network (DHCP, guest agent), "+
					"or change wait_for_ip", name, ifaceName(w.network), mac, sourceName(w.source), w.timeout)
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("domain %s: waiting for an IP address of interface MAC %s from %s: %w", name, mac, sourceName(w.source), ctx.Err())
			case <-time.After(delay):
			}
			delay = min(delay*3/2, 5*time.Second)
		}
	}
	return nil
}

func ifaceName(network string) string {
	if network == "" {
		return "on a bridge"
	}
	return "on network " + network
}

func sourceName(source string) string {
	switch source {
	case "lease":
		return "the network's DHCP leases"
	case "agent":
		return "the guest agent"
	}
	return "DHCP leases or the guest agent"
}

// pollAddress is one look for a usable address of the interface with mac.
func (r *Resource) pollAddress(ctx context.Context, id, mac, network, source string) string {
	if (source == "lease" || source == "any") && network != "" {
		leases, err := r.Client.NetworkLeases(ctx, network)
		if err == nil {
			for _, l := range leases[mac] {
				if libvirt.UsableAddress(l.IP) {
					return l.IP
				}
			}
		}
	}
	if source == "agent" || source == "any" {
		actx, cancel := context.WithTimeout(ctx, 3*time.Second)
		addrs, err := r.Client.AgentAddresses(actx, id)
		cancel()
		if err == nil {
			for _, a := range addrs[mac] {
				if libvirt.UsableAddress(a.IP) {
					return a.IP
				}
			}
		}
	}
	return ""
}
