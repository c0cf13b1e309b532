package acctest

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
)

// Names lists, sorted, the names of the test host's objects of a kind — "networks",
// "pools", or "snapshots of <domain>" — that start with prefix.
func Names(t testing.TB, kind, prefix string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var names []string
	err := Client(t).Read(ctx, "list "+kind, func(l *golibvirt.Libvirt) error {
		all, err := listNames(l, kind)
		names = names[:0]
		for _, n := range all {
			if strings.HasPrefix(n, prefix) {
				names = append(names, n)
			}
		}
		return err
	})
	if err != nil {
		t.Fatalf("list %s: %v", kind, err)
	}
	sort.Strings(names)
	return names
}

func listNames(l *golibvirt.Libvirt, kind string) ([]string, error) {
	var names []string
	switch {
	case kind == "networks":
		ns, _, err := l.ConnectListAllNetworks(1, 0)
		for _, n := range ns {
			names = append(names, n.Name)
		}
		return names, err
	case kind == "pools":
		ps, _, err := l.ConnectListAllStoragePools(1, 0)
		for _, p := range ps {
			names = append(names, p.Name)
		}
		return names, err
	case strings.HasPrefix(kind, "snapshots of "):
		d, err := l.DomainLookupByName(strings.TrimPrefix(kind, "snapshots of "))
		if err != nil {
			return nil, err
		}
		ss, _, err := l.DomainListAllSnapshots(d, 1, 0)
		for _, s := range ss {
			names = append(names, s.Name)
		}
		return names, err
	}
	return nil, fmt.Errorf("acctest.Names: unknown kind %q", kind)
}
