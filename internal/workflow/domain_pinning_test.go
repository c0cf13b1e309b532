package workflow

import (
	"context"
	"fmt"
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
