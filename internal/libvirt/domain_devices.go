package libvirt

import (
	"context"

	golibvirt "github.com/digitalocean/go-libvirt"
)

// Live changes of a running domain's devices, one call each, applied to the running
// domain and its persistent definition at once.

// BlockIOTune is a disk's I/O limits as virDomainSetBlockIoTune takes them (zero: no
// limit). Its fields are those of domainxml.IOTune, so one converts to the other.
type BlockIOTune struct {
	TotalBytesSec, ReadBytesSec, WriteBytesSec          uint64
	TotalIopsSec, ReadIopsSec, WriteIopsSec             uint64
	TotalBytesSecMax, ReadBytesSecMax, WriteBytesSecMax uint64
	TotalIopsSecMax, ReadIopsSecMax, WriteIopsSecMax    uint64
	SizeIopsSec                                         uint64
	GroupName                                           string
}

// Params is every limit of t as typed parameters, zeros included: libvirt leaves a
// parameter not sent as it was, so a limit removed must be sent as 0 to clear it. The
// group name goes only when set (an empty name is no group, and libvirt keeps the old
// group when none is sent; domainxml restarts the domain to remove one).
func (t BlockIOTune) Params() []golibvirt.TypedParam {
	u := func(name string, v uint64) golibvirt.TypedParam {
		return golibvirt.TypedParam{Field: name, Value: *golibvirt.NewTypedParamValueUllong(v)}
	}
	p := []golibvirt.TypedParam{
		u(golibvirt.DomainBlockIotuneTotalBytesSec, t.TotalBytesSec),
		u(golibvirt.DomainBlockIotuneReadBytesSec, t.ReadBytesSec),
		u(golibvirt.DomainBlockIotuneWriteBytesSec, t.WriteBytesSec),
		u(golibvirt.DomainBlockIotuneTotalIopsSec, t.TotalIopsSec),
		u(golibvirt.DomainBlockIotuneReadIopsSec, t.ReadIopsSec),
		u(golibvirt.DomainBlockIotuneWriteIopsSec, t.WriteIopsSec),
		u(golibvirt.DomainBlockIotuneTotalBytesSecMax, t.TotalBytesSecMax),
		u(golibvirt.DomainBlockIotuneReadBytesSecMax, t.ReadBytesSecMax),
		u(golibvirt.DomainBlockIotuneWriteBytesSecMax, t.WriteBytesSecMax),
		u(golibvirt.DomainBlockIotuneTotalIopsSecMax, t.TotalIopsSecMax),
		u(golibvirt.DomainBlockIotuneReadIopsSecMax, t.ReadIopsSecMax),
		u(golibvirt.DomainBlockIotuneWriteIopsSecMax, t.WriteIopsSecMax),
		u(golibvirt.DomainBlockIotuneSizeIopsSec, t.SizeIopsSec),
	}
	if t.GroupName != "" {
		p = append(p, golibvirt.TypedParam{Field: golibvirt.DomainBlockIotuneGroupName, Value: *golibvirt.NewTypedParamValueString(t.GroupName)})
	}
	return p
}

// SetBlockIOTune sets the I/O limits of the disk on target of a running domain, live and
// in its persistent definition.
func (c *Client) SetBlockIOTune(ctx context.Context, id, target string, t BlockIOTune) error {
	return c.onDomain(ctx, "set the iotune of disk "+target+" of", id, func(l *golibvirt.Libvirt, d Domain) error {
		return l.DomainSetBlockIOTune(d, target, t.Params(), uint32(golibvirt.DomainAffectLive|golibvirt.DomainAffectConfig))
	})
}
