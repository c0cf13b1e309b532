package workflow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/poll"
)

// DefaultDetachTimeout is how long a guest may take to let go of a device unplugged live.
const DefaultDetachTimeout = 30 * time.Second

// liveDeviceAPI is what live device changes ask of libvirt (internal/libvirt/domain_hotplug.go).
type liveDeviceAPI interface {
	UpdateDevice(ctx context.Context, id, xml string, force bool) error
	SetInterfaceBandwidth(ctx context.Context, id, device string, b libvirt.InterfaceBandwidth) error
	AttachDevice(ctx context.Context, id, xml string) error
	DetachDeviceLive(ctx context.Context, id, alias, xml string) error
	DetachDeviceConfig(ctx context.Context, id, xml string) error
	SetDomainMetadata(ctx context.Context, id, what, value string) error
}

// liveOps makes the live operations in order (domainxml sorts them: detaches, attaches,
// changes in place, a redefinition); the first failure stops the rest (the read-back shows where it
// stopped) and names the device. live is the running domain's XML, for the aliases.
func liveOps(ctx context.Context, api DomainAPI, ch Change, live string, ops []domainxml.LiveOp) error {
	for _, op := range ops {
		var err error
		what := fmt.Sprintf("%s %s", op.Noun, op.Device)
		switch op.Kind {
		case domainxml.LiveSetIOTune:
			var t libvirt.BlockIOTune
			if op.IOTune != nil {
				t = libvirt.BlockIOTune(*op.IOTune)
			}
			if err = api.SetBlockIOTune(ctx, ch.ID, op.Device, t); err != nil {
				err = fmt.Errorf("set the iotune of disk %s of running domain %s: %w", op.Device, ch.Name, err)
			}
		case domainxml.LiveUpdateDevice:
			if err = api.UpdateDevice(ctx, ch.ID, op.XML, op.Force); err != nil {
				err = fmt.Errorf("update %s of running domain %s: %w", what, ch.Name, err)
			}
		case domainxml.LiveSetBandwidth:
			if err = api.SetInterfaceBandwidth(ctx, ch.ID, op.Device, interfaceBandwidth(op.Bandwidth)); err != nil {
				err = fmt.Errorf("set the bandwidth of interface %s of running domain %s: %w", op.Device, ch.Name, err)
			}
		case domainxml.LiveSetMetadata:
			if err = api.SetDomainMetadata(ctx, ch.ID, op.Noun, op.XML); err != nil {
				err = fmt.Errorf("set the %s of running domain %s: %w", op.Noun, ch.Name, err)
			}
		case domainxml.LiveAttach:
			if op.Device == "" {
				what = op.Noun
			}
			if err = api.AttachDevice(ctx, ch.ID, op.XML); err != nil {
				err = fmt.Errorf("attach %s to running domain %s: %w", what, ch.Name, err)
			}
		case domainxml.LiveDetach:
			err = detach(ctx, api, ch, live, op)
		case domainxml.LivePinVCPU, domainxml.LivePinEmulator:
			err = pin(ctx, api, ch, op)
		case domainxml.LiveSetMemStatsPeriod:
			if err = api.SetMemoryStatsPeriod(ctx, ch.ID, op.Seconds); err != nil {
				err = fmt.Errorf("set the memballoon stats_period_sec of running domain %s: %w", ch.Name, err)
			}
		case domainxml.LiveRedefine:
			if ch.Rewrite {
				continue // Apply writes the definition after the live operations anyway
			}
			var st *libvirt.DomainStatus
			if st, err = api.GetDomainStatus(ctx, ch.ID); err == nil {
				// The definition now has what the operations above did (NICs with libvirt's MACs).
				ch.New = domainxml.WithLiveMACs(ch.New, parseCurrent(st.XML))
				err = redefine(ctx, api, ch, st.XML)
			}
		default:
			err = fmt.Errorf("domain %s, device %s: live operation %q is not known", ch.Name, op.Device, op.Kind)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// detach unplugs a device: asks the guest (by the alias in the live XML), waits until the
// live XML no longer has it, and only then removes it from the definition. When the
// guest does not let go in time the definition keeps the device, so live and persistent
// still agree, the state keeps it and the next apply tries again.
func detach(ctx context.Context, api DomainAPI, ch Change, live string, op domainxml.LiveOp) error {
	what := fmt.Sprintf("detach %s %s from domain %s", op.Noun, op.Device, ch.Name)
	alias, present := domainxml.LiveDeviceAlias(parseCurrent(live), op)
	if present {
		err := api.DetachDeviceLive(ctx, ch.ID, alias, op.XML)
		switch {
		case libvirt.IsDeviceMissing(err):
			// libvirt no longer has it live (the guest let go since we read the XML).
		case err != nil:
			return fmt.Errorf("%s: %w", what, err)
		default:
			if err := waitReleased(ctx, api, ch, op); err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
		}
	}
	if err := api.DetachDeviceConfig(ctx, ch.ID, op.XML); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// waitReleased polls the live XML every 500 ms until the device has left it (or the
// domain stopped). The device-removed event would be quicker, but it is lost on a
// reconnect; the poll is what is relied on.
func waitReleased(ctx context.Context, api DomainAPI, ch Change, op domainxml.LiveOp) error {
	timeout := ch.DetachTimeout
	if timeout <= 0 {
		timeout = DefaultDetachTimeout
	}
	err := poll.Until(ctx, poll.Options{Every: 500 * time.Millisecond, Timeout: timeout}, func(ctx context.Context) (bool, error) {
		st, err := api.GetDomainStatus(ctx, ch.ID)
		if err != nil {
			return false, err
		}
		_, still := domainxml.LiveDeviceAlias(parseCurrent(st.LiveXML), op)
		return !still || !st.Active, nil
	})
	if errors.Is(err, poll.ErrTimeout) {
		return fmt.Errorf("the guest did not release it within %s", timeout)
	}
	return err
}

func interfaceBandwidth(b domainxml.Bandwidth) libvirt.InterfaceBandwidth {
	var out libvirt.InterfaceBandwidth
	if l := b.Inbound; l != nil {
		out.InAverage, out.InPeak, out.InBurst = uint32(l.Average), uint32(l.Peak), uint32(l.Burst)
	}
	if l := b.Outbound; l != nil {
		out.OutAverage, out.OutPeak, out.OutBurst = uint32(l.Average), uint32(l.Peak), uint32(l.Burst)
	}
	return out
}
