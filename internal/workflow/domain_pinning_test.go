package workflow

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
)

func (f *fake) PinVCPU(_ context.Context, id string, vcpu uint, cpumap []byte) error {
	return f.record("PinVCPU", id, vcpu, fmt.Sprintf("%08b", cpumap))
}

func (f *fake) PinEmulator(_ context.Context, id string, cpumap []byte) error {
	return f.record("PinEmulator", id, fmt.Sprintf("%08b", cpumap))
}

func (f *fake) SetMemoryStatsPeriod(_ context.Context, id string, sec uint) error {
	return f.record("SetMemoryStatsPeriod", id, sec)
}

// pinned is spec(2, 256) with the vCPU pins and emulator pin given.
func pinned(pins map[uint]string, emulator string) domainxml.Spec {
	s := spec(2, 256)
	s.CPUPinning, s.EmulatorPinning = pins, emulator
	return s
}

// TestApplyLivePinning: a changed vCPU pin and a new emulator pin are live calls with the
// host-CPU bitmaps (live and config, no definition, no restart); removing a pin restarts.
func TestApplyLivePinning(t *testing.T) {
	f := newFake()
	f.status = running(true)
	res, err := Apply(context.Background(), f, Change{ID: "u", Name: "db", Running: true,
		Old: pinned(map[uint]string{0: "0", 1: "0"}, ""), New: pinned(map[uint]string{0: "0", 1: "1,3"}, "0-1")})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"GetDomainStatus u", "PinVCPU u 1 [00001010]", "PinEmulator u [00000011]"}
	if res.Method != domainxml.ChangeLive || res.Started || strings.Join(f.calls, "\n") != strings.Join(want, "\n") {
		t.Errorf("result %+v, calls\n%s\nwant\n%s", res, strings.Join(f.calls, "\n"), strings.Join(want, "\n"))
	}

	f = newFake()
	f.status = running(true)
	f.fail["PinVCPU"] = errInjected
	_, err = Apply(context.Background(), f, Change{ID: "u", Name: "db", Running: true,
		Old: pinned(nil, ""), New: pinned(map[uint]string{1: "1"}, "")})
	if err == nil || !strings.Contains(err.Error(), "pin vcpu 1 of running domain db to host CPUs 1") {
		t.Errorf("a failed pin names the vCPU and the domain: %v", err)
	}

	f = newFake()
	f.status = running(true)
	res, err = Apply(context.Background(), f, Change{ID: "u", Name: "db", Running: true,
		Old: pinned(map[uint]string{1: "1"}, ""), New: pinned(nil, "")})
	if err != nil || res.Method != domainxml.ChangeRestart || !strings.Contains(strings.Join(f.called(), " "), "DefineDomain") {
		t.Errorf("unpinning restarts: %+v %v %v", res, err, f.called())
	}
}

// TestApplyLiveMemStatsPeriod: a new balloon statistics period is one live call; taking
// it away stops the statistics live and rewrites the definition without them; any other
// balloon change restarts.
func TestApplyLiveMemStatsPeriod(t *testing.T) {
	balloon := func(sec *uint, deflate *bool) domainxml.Spec {
		s := spec(2, 256)
		s.GuestDevices.MemBalloon = &domainxml.MemBalloon{Model: "virtio", StatsPeriodSec: sec, AutoDeflate: deflate}
		return s
	}
	five, ten, on := uint(5), uint(10), true
	for _, c := range []struct {
		name     string
		old, new domainxml.Spec
		method   domainxml.Change
		calls    string // the calls' names
		call     string // the period call with its arguments
	}{
		{"changed", balloon(&ten, nil), balloon(&five, nil), domainxml.ChangeLive, "GetDomainStatus SetMemoryStatsPeriod", "SetMemoryStatsPeriod u 5"},
		{"added to libvirt's default balloon", spec(2, 256), balloon(&ten, nil), domainxml.ChangeLive, "GetDomainStatus SetMemoryStatsPeriod", "SetMemoryStatsPeriod u 10"},
		{"taken away", balloon(&ten, nil), balloon(nil, nil), domainxml.ChangeLive, "GetDomainStatus SetMemoryStatsPeriod GetDomainStatus DefineDomain", "SetMemoryStatsPeriod u 0"},
	} {
		f := newFake()
		f.status = running(true)
		res, err := Apply(context.Background(), f, Change{ID: "u", Name: "web", Running: true, Old: c.old, New: c.new})
		if err != nil || res.Method != c.method || strings.Join(f.called(), " ") != c.calls || !slices.Contains(f.calls, c.call) {
			t.Errorf("%s: %+v %v, calls %q want %q with %q", c.name, res, err, f.calls, c.calls, c.call)
		}
	}
	f := newFake()
	f.status = running(true)
	res, err := Apply(context.Background(), f, Change{ID: "u", Name: "web", Running: true, Old: balloon(&ten, nil), New: balloon(&five, &on)})
	if err != nil || res.Method != domainxml.ChangeRestart {
		t.Errorf("autodeflate with the period restarts: %+v %v", res, err)
	}
}
