package capi

import (
	"strings"
	"testing"
)

func TestDomainName(t *testing.T) {
	cases := []struct{ ns, name, wantPrefix string }{
		{"default", "worker-0", "default-worker-0-"},
		{"Team.A", "CP_1", "team-a-cp-1-"},
		{"", "x", "x-"},
		{"---", "***", "m-"},
	}
	for _, tc := range cases {
		got := DomainName(tc.ns, tc.name)
		if !strings.HasPrefix(got, tc.wantPrefix) || len(got) != len(tc.wantPrefix)+hashLength || !IsDNSLabel(got) {
			t.Errorf("DomainName(%q, %q) = %q, want %q + 6 hex", tc.ns, tc.name, got, tc.wantPrefix)
		}
		if DomainName(tc.ns, tc.name) != got {
			t.Errorf("not stable: %q", got)
		}
	}
	// The hash is of the raw inputs: names that sanitise alike still differ.
	if DomainName("a", "b.c") == DomainName("a", "b-c") {
		t.Error("b.c and b-c collide")
	}
	// The same text split differently is another machine.
	if DomainName("a-b", "c") == DomainName("a", "b-c") {
		t.Error("namespace/name split ignored")
	}
	long := DomainName(strings.Repeat("n", 60), strings.Repeat("m", 60))
	if len(long) != MaxNameLength || !IsDNSLabel(long) {
		t.Errorf("long name %q (%d chars)", long, len(long))
	}
	// A truncation point that lands on '-' must not leave "--" before the hash.
	edge := DomainName(strings.Repeat("a", 55), "b")
	if strings.Contains(edge, "--") || !IsDNSLabel(edge) {
		t.Errorf("edge truncation %q", edge)
	}
}

func TestMAC(t *testing.T) {
	m := MAC("default-worker-0-abcdef")
	if !strings.HasPrefix(m, MACPrefix+":") || len(m) != 17 {
		t.Fatalf("MAC = %q", m)
	}
	if MAC("default-worker-0-abcdef") != m || MAC("default-worker-1-abcdef") == m {
		t.Error("MAC is not a stable function of the name")
	}
}

func TestVolumeNamesAndProviderID(t *testing.T) {
	if RootVolumeName("d") != "d.qcow2" || SeedVolumeName("d") != "cloudinit-d.iso" || ProviderID("u") != "libvirt://u" {
		t.Error("names differ from the contract")
	}
}

func FuzzDomainName(f *testing.F) {
	f.Add("default", "worker-0")
	f.Add("Ünïcode", "名字")
	f.Add(strings.Repeat("-", 100), ".")
	f.Fuzz(func(t *testing.T, ns, name string) {
		d := DomainName(ns, name)
		if !IsDNSLabel(d) {
			t.Fatalf("DomainName(%q, %q) = %q is not a DNS label", ns, name, d)
		}
		m := MAC(d)
		if !strings.HasPrefix(m, "52:54:00:") || len(m) != 17 {
			t.Fatalf("MAC(%q) = %q", d, m)
		}
	})
}
