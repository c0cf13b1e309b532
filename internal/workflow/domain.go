// Package workflow holds the provider's multi-step changes on a libvirt host as plain Go
// functions: the one lifecycle every VM-shaped resource (libvirt_domain, libvirt_clone,
// libvirt_cluster_machine) goes through when it changes (Apply), and the create and
// delete workflows with their rollbacks. Each takes a narrow interface of the client
// calls it makes, so tests run it against a fake that records the calls and fails the
// ones a test picks; *libvirt.Client satisfies every interface here.
//
// The provider package translates between Terraform and these functions (schema, model
// to spec, diagnostics); internal/libvirt speaks to libvirt; internal/domainxml owns the
// domain XML.
package workflow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// DomainAPI is what the domain lifecycle asks of libvirt.
type DomainAPI interface {
	GetDomainStatus(ctx context.Context, id string) (*libvirt.DomainStatus, error)
	DefineDomain(ctx context.Context, name, xml string) (libvirt.Domain, error)
	SetDomainSizing(ctx context.Context, id string, vcpu uint, kib uint64, live bool) error
	SetDomainAutostart(ctx context.Context, id string, on bool) error
	StartDomain(ctx context.Context, id string) error
	ShutdownDomain(ctx context.Context, id string, timeout time.Duration) (forced bool, err error)
	// SetBlockIOTune sets a disk's I/O limits, live and persistent (a LiveSetIOTune).
	SetBlockIOTune(ctx context.Context, id, target string, t libvirt.BlockIOTune) error
	liveDeviceAPI
	pinningAPI
}

// Change is one update of an existing domain.
type Change struct {
	ID, Name string
	// Old is what the definition says now (as the resource last stored it), New what it is
	// to say. Unknown values must already compare unequal.
	Old, New domainxml.Spec
	// Running is whether the domain is to run afterwards.
	Running bool
	// Autostart is what autostart is to be; nil leaves it as it is.
	Autostart *bool
	// ShutdownTimeout is how long a graceful shutdown (for a restart, or running = false)
	// may take before the domain is forced off.
	ShutdownTimeout time.Duration
	// Redefine makes the new definition from the current persistent one. nil: merge New
	// onto it (domainxml.Build), what libvirt_domain wants. Resources that control only a
	// part of the definition (a clone's or a cluster machine's sizing) write that part.
	Redefine func(current *libvirtxml.Domain) (*libvirtxml.Domain, error)
	// Rewrite forces the definition to be written even when nothing the domain runs with
	// changes (libvirt_domain: the same disks referenced another way, recorded in the
	// definition's metadata). No restart follows from it.
	Rewrite bool
	// DetachTimeout is how long the guest may take to let go of a device unplugged live
	// (0: DefaultDetachTimeout); the context bounds it too.
	DetachTimeout time.Duration
	// DeferRestart leaves a running domain running when the change needs a restart: only
	// the definition is rewritten (libvirt_domain's restart_on_update = false).
	DeferRestart bool
}

// Result says how a change reached the domain.
type Result struct {
	Method  domainxml.Change // none, live, restart or definition
	Forced  bool             // the shutdown for the restart had to force the domain off
	Started bool             // the domain was started (the caller may wait for its addresses)
	// Deferred: the change needed a restart that DeferRestart left to the user; the domain
	// still runs its old definition, in the run RunID (libvirt's domain id, new on every start).
	Deferred bool
	RunID    int32
}

// Apply takes a domain from ch.Old to ch.New, the one path every VM-shaped resource's
// update goes through: classify (what the domain's state allows: live, restart, or the
// definition only) → redefine, or change the running domain live → autostart → power
// transition (stop, restart gracefully, or start). A failure stops the steps after it
// that depend on it (no power transition after a failed redefine), and every failure is
// returned; the caller reads the domain back either way.
func Apply(ctx context.Context, api DomainAPI, ch Change) (Result, error) {
	st, err := api.GetDomainStatus(ctx, ch.ID)
	if err != nil {
		return Result{}, err
	}
	cur := parseCurrent(st.XML)
	plan := domainxml.PlanChange(ch.Old, ch.New, st.Active, ch.Running, cur)
	res := Result{Method: plan.Change}
	var errs []error
	switch res.Method {
	case domainxml.ChangeRestart, domainxml.ChangeDefinition:
		if err := redefine(ctx, api, ch, st.XML); err != nil {
			return res, err
		}
		if res.Method == domainxml.ChangeRestart && ch.DeferRestart {
			res.Method, res.Deferred, res.RunID = domainxml.ChangeDefinition, true, st.Domain.ID
		}
	case domainxml.ChangeLive:
		var vcpu uint
		var kib uint64
		if ch.Old.VCPU != ch.New.VCPU {
			vcpu = ch.New.VCPU
		}
		if ch.Old.MemoryKiB != ch.New.MemoryKiB {
			kib = ch.New.MemoryKiB
		}
		if vcpu > 0 || kib > 0 {
			errs = append(errs, api.SetDomainSizing(ctx, ch.ID, vcpu, kib, true))
		}
		if errors.Join(errs...) == nil {
			errs = append(errs, liveOps(ctx, api, ch, st.LiveXML, plan.Ops))
		}
	}
	if ch.Rewrite && (res.Method == domainxml.ChangeNone || res.Method == domainxml.ChangeLive) && errors.Join(errs...) == nil {
		// Read again: a live change above rewrote the persistent definition too.
		cur, err := api.GetDomainStatus(ctx, ch.ID)
		if err == nil {
			if res.Method == domainxml.ChangeLive {
				ch.New = domainxml.WithLiveMACs(ch.New, parseCurrent(cur.XML)) // NICs attached without one
			}
			err = redefine(ctx, api, ch, cur.XML)
		}
		errs = append(errs, err)
	}
	if ch.Autostart != nil && *ch.Autostart != st.Autostart {
		errs = append(errs, api.SetDomainAutostart(ctx, ch.ID, *ch.Autostart))
	}
	if errors.Join(errs...) != nil {
		return res, errors.Join(errs...)
	}
	start := false
	switch {
	case st.Active && !ch.Running:
		_, err = api.ShutdownDomain(ctx, ch.ID, ch.ShutdownTimeout)
	case st.Active && res.Method == domainxml.ChangeRestart:
		res.Forced, err = api.ShutdownDomain(ctx, ch.ID, ch.ShutdownTimeout)
		start = err == nil
	case !st.Active && ch.Running:
		start = true
	}
	if start {
		err = api.StartDomain(ctx, ch.ID)
		res.Started = err == nil
	}
	return res, err
}

// parseCurrent is the current definition for the live hooks; nil when it does not parse
// (the hooks cope, and redefine reports the error).
func parseCurrent(text string) *libvirtxml.Domain {
	d, err := domainxml.UnmarshalDomain(text)
	if err != nil {
		return nil
	}
	return d
}

// redefine writes the definition ch wants, made from the current one.
func redefine(ctx context.Context, api DomainAPI, ch Change, current string) error {
	base, err := domainxml.UnmarshalDomain(current)
	if err != nil {
		return fmt.Errorf("parse the definition of domain %s: %w", ch.Name, err)
	}
	build := ch.Redefine
	if build == nil {
		build = func(cur *libvirtxml.Domain) (*libvirtxml.Domain, error) { return domainxml.Build(cur, ch.New) }
	}
	next, err := build(base)
	if err != nil {
		return fmt.Errorf("build the definition of domain %s: %w", ch.Name, err)
	}
	text, err := next.Marshal()
	if err != nil {
		return fmt.Errorf("build the definition of domain %s: %w", ch.Name, err)
	}
	_, err = api.DefineDomain(ctx, ch.Name, text)
	return err
}

// SizingOnly is a Redefine that writes only the sizing of ch.New (vCPUs, memory and
// their ceilings) into the current definition: for resources whose definition is made
// elsewhere (a clone's from its source, a cluster machine's at create).
func SizingOnly(next domainxml.Spec) func(*libvirtxml.Domain) (*libvirtxml.Domain, error) {
	return func(cur *libvirtxml.Domain) (*libvirtxml.Domain, error) {
		domainxml.SetSizing(cur, next)
		return cur, nil
	}
}
