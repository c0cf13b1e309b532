package workflow

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

const baseXML = `<domain type="qemu"><name>web</name><uuid>6f1c2b9e-0c55-4a7e-8d2a-1f3e5c7b9a01</uuid>` +
	`<memory unit="KiB">524288</memory><currentMemory unit="KiB">262144</currentMemory><vcpu placement="static" current="1">2</vcpu>` +
	`<os><type>hvm</type></os></domain>`

func spec(vcpu uint, mib uint64) domainxml.Spec {
	return domainxml.Spec{Name: "web", UUID: "6f1c2b9e-0c55-4a7e-8d2a-1f3e5c7b9a01", Type: "qemu",
		VCPU: vcpu, MaxVCPU: 2, MemoryKiB: mib * domainxml.KiBPerMiB, MaxMemoryKiB: 512 * domainxml.KiBPerMiB, Graphics: domainxml.Graphics{Type: domainxml.GraphicsNone}}
}

func running(active bool) *libvirt.DomainStatus {
	st := &libvirt.DomainStatus{Active: active, State: "shutoff", XML: baseXML}
	if active {
		st.State = "running"
	}
	return st
}

// TestApply: which calls each kind of change makes, in order.
func TestApply(t *testing.T) {
	on, off := true, false
	withMachine := spec(1, 256)
	withMachine.CPUMode = "host-model" // any structural change
	cases := []struct {
		name      string
		active    bool
		ch        Change
		want      domainxml.Change
		calls     string
		started   bool
		autostart bool
	}{
		{"nothing", true, Change{Old: spec(1, 256), New: spec(1, 256), Running: true}, domainxml.ChangeNone,
			"GetDomainStatus", false, false},
		{"live vcpu and memory", true, Change{Old: spec(1, 256), New: spec(2, 384), Running: true}, domainxml.ChangeLive,
			"GetDomainStatus SetDomainSizing", false, false},
		{"restart", true, Change{Old: spec(1, 256), New: withMachine, Running: true}, domainxml.ChangeRestart,
			"GetDomainStatus DefineDomain ShutdownDomain StartDomain", true, false},
		{"restart deferred", true, Change{Old: spec(1, 256), New: withMachine, Running: true, DeferRestart: true}, domainxml.ChangeDefinition,
			"GetDomainStatus DefineDomain", false, false},
		{"deferring needs no restart when live", true, Change{Old: spec(1, 256), New: spec(2, 384), Running: true, DeferRestart: true},
			domainxml.ChangeLive, "GetDomainStatus SetDomainSizing", false, false},
		{"stopped: definition only", false, Change{Old: spec(1, 256), New: spec(2, 384), Running: false}, domainxml.ChangeDefinition,
			"GetDomainStatus DefineDomain", false, false},
		{"start", false, Change{Old: spec(1, 256), New: spec(1, 256), Running: true}, domainxml.ChangeNone,
			"GetDomainStatus StartDomain", true, false},
		{"stop", true, Change{Old: spec(1, 256), New: spec(1, 256), Running: false}, domainxml.ChangeNone,
			"GetDomainStatus ShutdownDomain", false, false},
		{"stop and resize", true, Change{Old: spec(1, 256), New: spec(2, 256), Running: false}, domainxml.ChangeDefinition,
			"GetDomainStatus DefineDomain ShutdownDomain", false, false},
		{"autostart on", true, Change{Old: spec(1, 256), New: spec(1, 256), Running: true, Autostart: &on}, domainxml.ChangeNone,
			"GetDomainStatus SetDomainAutostart", false, true},
		{"autostart already off", true, Change{Old: spec(1, 256), New: spec(1, 256), Running: true, Autostart: &off}, domainxml.ChangeNone,
			"GetDomainStatus", false, false},
		{"rewrite references, live", true, Change{Old: spec(1, 256), New: spec(2, 256), Running: true, Rewrite: true}, domainxml.ChangeLive,
			"GetDomainStatus SetDomainSizing GetDomainStatus DefineDomain", false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake()
			f.status = running(c.active)
			c.ch.ID, c.ch.Name = "uuid-1", "web"
			res, err := Apply(context.Background(), f, c.ch)
			if err != nil {
				t.Fatal(err)
			}
			if res.Deferred != (c.name == "restart deferred") {
				t.Errorf("%s: deferred %v", c.name, res.Deferred)
			}
			if res.Method != c.want || res.Started != c.started || strings.Join(f.called(), " ") != c.calls {
				t.Errorf("%s: method %s started %t calls %v; want %s %t %s", c.name, res.Method, res.Started, f.calls, c.want, c.started, c.calls)
			}
		})
	}
}

// TestApplyLiveSizingArgs: only what changed is sent, live.
func TestApplyLiveSizingArgs(t *testing.T) {
	f := newFake()
	f.status = running(true)
	if _, err := Apply(context.Background(), f, Change{ID: "u", Name: "web", Old: spec(1, 256), New: spec(1, 384), Running: true}); err != nil {
		t.Fatal(err)
	}
	if got := f.calls[1]; got != "SetDomainSizing u 0 393216 true" { // KiB
		t.Errorf("sizing call %q", got)
	}
}

// TestApplyRestartWritesTheNewDefinition: the definition sent is the merge of New onto the
// current one (Redefine nil), or what Redefine makes.
func TestApplyRestartWritesTheNewDefinition(t *testing.T) {
	f := newFake()
	f.status = running(false)
	next := spec(2, 384)
	if _, err := Apply(context.Background(), f, Change{ID: "u", Name: "web", Old: spec(1, 256), New: next}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(f.status.XML, `<vcpu placement="static">2</vcpu>`) || !strings.Contains(f.status.XML, `<currentMemory unit="KiB">393216</currentMemory>`) {
		t.Errorf("defined:\n%s", f.status.XML)
	}
	f = newFake()
	f.status = running(false)
	if _, err := Apply(context.Background(), f, Change{ID: "u", Name: "web", Old: spec(1, 256), New: next, Redefine: SizingOnly(next)}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(f.status.XML, `<vcpu placement="static">2</vcpu>`) || strings.Contains(f.status.XML, "<devices>") {
		t.Errorf("sizing only defined:\n%s", f.status.XML)
	}
}

// TestApplyFailures: a failed step stops the power transition after it, and its error
// comes back naming what failed.
func TestApplyFailures(t *testing.T) {
	withMachine := spec(1, 256)
	withMachine.CPUMode = "host-model"
	cases := []struct {
		name, fail, calls string
	}{
		{"status", "GetDomainStatus", "GetDomainStatus"},
		{"define", "DefineDomain", "GetDomainStatus DefineDomain"},
		{"shutdown", "ShutdownDomain", "GetDomainStatus DefineDomain ShutdownDomain"},
		{"start", "StartDomain", "GetDomainStatus DefineDomain ShutdownDomain StartDomain"},
	}
	for _, c := range cases {
		f := newFake()
		f.status = running(true)
		f.fail[c.fail] = fmt.Errorf("%s: %w", c.fail, errInjected)
		res, err := Apply(context.Background(), f, Change{ID: "u", Name: "web", Old: spec(1, 256), New: withMachine, Running: true, ShutdownTimeout: time.Second})
		if !errors.Is(err, errInjected) || !strings.Contains(err.Error(), c.fail) || res.Started {
			t.Errorf("%s: err %v started %t", c.name, err, res.Started)
		}
		if got := strings.Join(f.called(), " "); got != c.calls {
			t.Errorf("%s: calls %s, want %s", c.name, got, c.calls)
		}
	}
	// A failed live change: autostart is still set, no power transition follows.
	on := true
	f := newFake()
	f.status = running(true)
	f.fail["SetDomainSizing"] = errInjected
	if _, err := Apply(context.Background(), f, Change{ID: "u", Name: "web", Old: spec(1, 256), New: spec(2, 256), Running: true, Autostart: &on, Rewrite: true}); !errors.Is(err, errInjected) {
		t.Errorf("live failure: %v", err)
	}
	if got := strings.Join(f.called(), " "); got != "GetDomainStatus SetDomainSizing SetDomainAutostart" {
		t.Errorf("calls %s", got)
	}
	// A failed stop for running = false is reported.
	f = newFake()
	f.status = running(true)
	f.fail["ShutdownDomain"] = errInjected
	if _, err := Apply(context.Background(), f, Change{ID: "u", Name: "web", Old: spec(1, 256), New: spec(1, 256), Running: false}); !errors.Is(err, errInjected) {
		t.Errorf("stop failure: %v", err)
	}
}
