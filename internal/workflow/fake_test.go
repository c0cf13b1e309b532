package workflow

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// fake is a client that records every call, in order, as "Method arg ...", and fails the
// calls a test names: fail["DefineDomain"] = err fails every DefineDomain, failAt[3] the
// fourth call whatever it is. It implements every API of this package; what it returns
// comes from the fields a test sets.
type fake struct {
	mu     sync.Mutex
	calls  []string
	fail   map[string]error
	failAt map[int]error

	status *libvirt.DomainStatus // what GetDomainStatus returns (a copy)
	forced bool                  // what ShutdownDomain reports
}

func newFake() *fake { return &fake{fail: map[string]error{}, failAt: map[int]error{}} }

var errInjected = errors.New("injected failure")

// record notes a call and returns the failure injected for it, if any.
func (f *fake) record(method string, args ...any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	parts := []string{method}
	for _, a := range args {
		parts = append(parts, fmt.Sprint(a))
	}
	f.calls = append(f.calls, strings.Join(parts, " "))
	if err, ok := f.failAt[len(f.calls)-1]; ok {
		return err
	}
	return f.fail[method]
}

// called lists the calls made, method names only.
func (f *fake) called() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, len(f.calls))
	for i, c := range f.calls {
		out[i], _, _ = strings.Cut(c, " ")
	}
	return out
}

func (f *fake) GetDomainStatus(_ context.Context, id string) (*libvirt.DomainStatus, error) {
	if err := f.record("GetDomainStatus", id); err != nil {
		return nil, err
	}
	if f.status == nil {
		return nil, fmt.Errorf("domain %s: %w", id, libvirt.ErrNotFound)
	}
	st := *f.status
	return &st, nil
}

func (f *fake) DefineDomain(_ context.Context, name, xml string) (libvirt.Domain, error) {
	err := f.record("DefineDomain", name)
	if err == nil && f.status != nil {
		f.status.XML = xml
	}
	return libvirt.Domain{Name: name}, err
}

func (f *fake) SetDomainSizing(_ context.Context, id string, vcpu uint, mib uint64, live bool) error {
	return f.record("SetDomainSizing", id, vcpu, mib, live)
}

func (f *fake) SetDomainAutostart(_ context.Context, id string, on bool) error {
	return f.record("SetDomainAutostart", id, on)
}

func (f *fake) StartDomain(_ context.Context, id string) error {
	err := f.record("StartDomain", id)
	if err == nil && f.status != nil {
		f.status.Active, f.status.State = true, "running"
	}
	return err
}

func (f *fake) ShutdownDomain(_ context.Context, id string, timeout time.Duration) (bool, error) {
	err := f.record("ShutdownDomain", id, timeout)
	if err == nil && f.status != nil {
		f.status.Active, f.status.State = false, "shutoff"
	}
	return f.forced && err == nil, err
}
