package acctest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	golibvirt "github.com/digitalocean/go-libvirt"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// TestDriverURI is libvirt's in-memory test driver, reached through the daemon.
const TestDriverURI = "test:///default"

// HoldTestDriver keeps a connection to the test driver open for the whole test. The driver keeps what was defined only while a connection is
// open, and every Terraform command's provider opens and closes its own: without this,
// each step would find the host empty again.
func HoldTestDriver(t testing.TB) {
	t.Helper()
	c, err := libvirt.NewClient(libvirt.Config{URI: TestDriverURI, MaxConnections: 1})
	if err != nil {
		t.Fatalf("acctest: client for %s: %v", TestDriverURI, err)
	}
	hold := make(chan struct{})
	held := make(chan error, 1)
	// A read that does not return before the test ends holds its connection.
	go func() {
		held <- c.Read(context.Background(), "hold the test driver", func(l *golibvirt.Libvirt) error {
			if _, err := l.ConnectGetHostname(); err != nil {
				return err
			}
			<-hold
			return nil
		})
	}()
	t.Cleanup(func() {
		close(hold)
		if err := <-held; err != nil {
			t.Errorf("acctest: holding %s: %v", TestDriverURI, err)
		}
	})
}

// CheckGoneOnTestDriver is a CheckDestroy that asks the held test driver that the
// domains are gone.
func CheckGoneOnTestDriver(names ...string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		c, err := libvirt.NewClient(libvirt.Config{URI: TestDriverURI, MaxConnections: 2})
		if err != nil {
			return err
		}
		var errs []error
		for _, n := range names {
			_, err := c.LookupDomain(context.Background(), n)
			switch {
			case err == nil:
				errs = append(errs, fmt.Errorf("domain %s still exists on %s after destroy", n, TestDriverURI))
			case !errors.Is(err, libvirt.ErrNotFound):
				errs = append(errs, fmt.Errorf("cannot tell whether domain %s is gone: %w", n, err))
			}
		}
		return errors.Join(errs...)
	}
}

// CheckOnTestDriver is a check that asks the test driver for domain name: it must exist,
// be in state (shutoff, running, ...) and have domain type typ in its definition.
func CheckOnTestDriver(name, state, typ string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		c, err := libvirt.NewClient(libvirt.Config{URI: TestDriverURI, MaxConnections: 2})
		if err != nil {
			return err
		}
		st, err := c.GetDomainStatus(context.Background(), name)
		if err != nil {
			return fmt.Errorf("domain %s on %s: %w", name, TestDriverURI, err)
		}
		if st.State != state {
			return fmt.Errorf("domain %s on %s is %s, want %s", name, TestDriverURI, st.State, state)
		}
		var doc string
		err = c.Read(context.Background(), "read domain "+name, func(l *golibvirt.Libvirt) error {
			var err error
			doc, err = l.DomainGetXMLDesc(st.Domain, golibvirt.DomainXMLInactive)
			return err
		})
		if err != nil {
			return err
		}
		var d libvirtxml.Domain
		if err := d.Unmarshal(doc); err != nil {
			return err
		}
		if d.Type != typ {
			return fmt.Errorf("domain %s on %s has type %q, want %q", name, TestDriverURI, d.Type, typ)
		}
		return nil
	}
}
