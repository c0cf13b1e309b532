package libvirt

import (
	"context"

	golibvirt "github.com/digitalocean/go-libvirt"
)

// InterfaceBandwidth is a NIC's limits as virDomainSetInterfaceParameters takes them
// (KiB/s, KiB; zero: no limit).
type InterfaceBandwidth struct {
	InAverage, InPeak, InBurst    uint32
	OutAverage, OutPeak, OutBurst uint32
}

// Params is every limit as typed parameters, zeros included: libvirt keeps a parameter
// not sent, and an average of 0 removes that direction's limits.
func (b InterfaceBandwidth) Params() []golibvirt.TypedParam {
	u := func(name string, v uint32) golibvirt.TypedParam {
		return golibvirt.TypedParam{Field: name, Value: *golibvirt.NewTypedParamValueUint(v)}
	}
	return []golibvirt.TypedParam{
		u(golibvirt.DomainBandwidthInAverage, b.InAverage),
		u(golibvirt.DomainBandwidthInPeak, b.InPeak),
		u(golibvirt.DomainBandwidthInBurst, b.InBurst),
		u(golibvirt.DomainBandwidthOutAverage, b.OutAverage),
		u(golibvirt.DomainBandwidthOutPeak, b.OutPeak),
		u(golibvirt.DomainBandwidthOutBurst, b.OutBurst),
	}
}

// SetInterfaceBandwidth sets the limits of the NIC device (its MAC or vnet name) of a
// running domain, live and in its persistent definition.
func (c *Client) SetInterfaceBandwidth(ctx context.Context, id, device string, b InterfaceBandwidth) error {
	return c.onDomain(ctx, "set the bandwidth of interface "+device+" of", id, func(l *golibvirt.Libvirt, d Domain) error {
		return l.DomainSetInterfaceParameters(d, device, b.Params(), uint32(golibvirt.DomainAffectLive|golibvirt.DomainAffectConfig))
	})
}
