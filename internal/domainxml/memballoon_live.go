package domainxml

import (
	"reflect"

	"libvirt.org/go/libvirtxml"
)

// A running domain's memory-statistics period is the one guest-device setting libvirt
// changes live (virDomainSetMemoryStatsPeriod): a change of memballoon.stats_period_sec
// alone is live, any other guest-device change restarts.

// LiveSetMemStatsPeriod sets how often the balloon driver collects the guest's memory
// statistics, live and in the definition; Seconds 0 stops the collection.
const LiveSetMemStatsPeriod LiveOpKind = "set-memstats-period"

func guestDevicesLive(old, next Spec, cur *libvirtxml.Domain) ([]LiveOp, string) {
	const why = "guest_devices changes (of them only memballoon.stats_period_sec applies live)"
	ob, nb := balloonOrDefault(old.GuestDevices.MemBalloon, cur), balloonOrDefault(next.GuestDevices.MemBalloon, nil)
	if ob == nil || nb == nil || ob.Model == "none" || nb.Model == "none" {
		return nil, why
	}
	o, n := old.GuestDevices, next.GuestDevices
	oc, nc := *ob, *nb
	oc.StatsPeriodSec, nc.StatsPeriodSec = nil, nil
	o.MemBalloon, n.MemBalloon = &oc, &nc
	if !reflect.DeepEqual(normalGuest(o), normalGuest(n)) {
		return nil, why
	}
	var sec uint
	if nb.StatsPeriodSec != nil {
		sec = *nb.StatsPeriodSec
	}
	ops := []LiveOp{{Kind: LiveSetMemStatsPeriod, Noun: "memballoon", Device: "balloon", Seconds: sec}}
	if nb.StatsPeriodSec == nil {
		// libvirt writes period 0 into the definition; the rewrite takes <stats> out so
		// the definition reads back as the configuration says (no stats_period_sec).
		ops = append(ops, LiveOp{Kind: LiveRedefine, Noun: "memballoon", Device: "balloon"})
	}
	return ops, ""
}

// balloonOrDefault is m, or for nil (the spec leaves the balloon to libvirt) the one
// libvirt adds: cur's when the caller has the definition, else virtio (libvirt's default
// on every architecture this provider builds for).
func balloonOrDefault(m *MemBalloon, cur *libvirtxml.Domain) *MemBalloon {
	if m != nil {
		return m
	}
	if cur != nil && cur.Devices != nil {
		if b := cur.Devices.MemBalloon; b == nil || b.Model != "virtio" || b.Stats != nil {
			return nil
		}
	}
	return &MemBalloon{Model: "virtio"}
}
