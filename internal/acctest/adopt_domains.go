package acctest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// Helpers of the CLI round-trip suite of the adopt fixtures (issue #25), which defines
// domains under fixed names (adopt-NNN, the names of the fixtures' twins) rather than
// RandomName: it must find and remove what an earlier run left.

// TryDefineDomain defines a domain from XML, as `virsh define` does; libvirt's refusal is
// returned, not fatal.
func TryDefineDomain(t testing.TB, doc string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return Client(t).Write(ctx, "define domain", func(l *golibvirt.Libvirt) error {
		_, err := l.DomainDefineXML(doc)
		return err
	})
}

// DomainDefinitionXML is a domain's persistent definition as `virsh dumpxml --inactive
// --security-info` prints it.
func DomainDefinitionXML(t testing.TB, name string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var text string
	err := Client(t).Read(ctx, "dump domain "+name, func(l *golibvirt.Libvirt) error {
		d, err := l.DomainLookupByName(name)
		if err != nil {
			return err
		}
		text, err = l.DomainGetXMLDesc(d, golibvirt.DomainXMLInactive|golibvirt.DomainXMLSecure)
		return err
	})
	return text, err
}

// DomainNames lists the names of the domains on the test host (defined or running) that
// start with prefix, sorted.
func DomainNames(t testing.TB, prefix string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var names []string
	err := Client(t).Read(ctx, "list domains "+prefix+"*", func(l *golibvirt.Libvirt) error {
		names = nil
		ds, _, err := l.ConnectListAllDomains(1, 0)
		if err != nil {
			return err
		}
		for _, d := range ds {
			if strings.HasPrefix(d.Name, prefix) {
				names = append(names, d.Name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("list domains %s*: %v", prefix, err)
	}
	sort.Strings(names)
	return names
}

// RemoveDomainsNamed powers off and undefines every domain whose name starts with prefix,
// with everything libvirt keeps for it (varstore, TPM state, snapshot and checkpoint
// metadata: virsh undefine --nvram --tpm ...). It returns the names it removed and an
// error naming those it could not remove.
func RemoveDomainsNamed(t testing.TB, prefix string) ([]string, error) {
	t.Helper()
	names := DomainNames(t, prefix)
	var errs []error
	for _, name := range names {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := Client(t).Write(ctx, "remove domain "+name, func(l *golibvirt.Libvirt) error {
			d, err := l.DomainLookupByName(name)
			if err != nil {
				return err
			}
			_ = l.DomainDestroy(d) // a defined domain answers "not running"
			return l.DomainUndefineFlags(d, libvirt.DomainUndefineAll)
		})
		cancel()
		if err != nil && !errors.Is(err, libvirt.ErrNotFound) && !libvirt.HasCode(err, golibvirt.ErrNoDomain) {
			errs = append(errs, fmt.Errorf("remove domain %s: %w", name, err))
		}
	}
	if left := DomainNames(t, prefix); len(left) > 0 {
		errs = append(errs, fmt.Errorf("domains %s* still defined: %s", prefix, strings.Join(left, " ")))
	}
	return names, errors.Join(errs...)
}

// LockNames holds an exclusive lock on this machine on the domain names a test defines
// under a fixed prefix (two CLI passes run at once would remove each other's domains),
// waiting for it, until the test ends.
func LockNames(t testing.TB, prefix string) {
	t.Helper()
	path := filepath.Join(os.TempDir(), "kvmforge-acc-"+prefix+"lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatalf("lock %s: %v", path, err)
	}
	start := time.Now()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		_ = f.Close()
		t.Fatalf("lock %s: %v", path, err)
	}
	if d := time.Since(start); d > time.Second {
		t.Logf("waited %s for %s (another run holds the %s* names)", d.Round(time.Second), path, prefix)
	}
	t.Cleanup(func() { _ = f.Close() })
}
