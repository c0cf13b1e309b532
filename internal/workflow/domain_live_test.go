package workflow

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
)

// withDisk is spec(1, 256) with one virtio disk on vda and the limits t.
func withDisk(t *domainxml.IOTune) domainxml.Spec {
	s := spec(1, 256)
	s.Disks = []domainxml.Disk{{Path: "/pool/web.qcow2", Device: domainxml.DeviceDisk, Bus: "virtio", Target: "vda", Format: "qcow2",
		DiskTuning: domainxml.DiskTuning{IOTune: t}}}
	return s
}

// TestApplyLiveIOTune: an iotune change of a running domain is one SetBlockIOTune with
// every limit (zeros clear the removed ones), no definition and no restart.
func TestApplyLiveIOTune(t *testing.T) {
	cases := []struct {
		name     string
		old, new *domainxml.IOTune
		params   string
	}{
		{"set", nil, &domainxml.IOTune{TotalBytesSec: 1048576, TotalIopsSec: 100, TotalIopsSecMax: 200, SizeIopsSec: 8192},
			"total_bytes_sec=1048576,read_bytes_sec=0,write_bytes_sec=0,total_iops_sec=100,read_iops_sec=0,write_iops_sec=0," +
				"total_bytes_sec_max=0,read_bytes_sec_max=0,write_bytes_sec_max=0,total_iops_sec_max=200,read_iops_sec_max=0,write_iops_sec_max=0,size_iops_sec=8192"},
		{"change with group", &domainxml.IOTune{TotalBytesSec: 1}, &domainxml.IOTune{ReadBytesSec: 5, WriteBytesSec: 6, GroupName: "g"},
			"total_bytes_sec=0,read_bytes_sec=5,write_bytes_sec=6,total_iops_sec=0,read_iops_sec=0,write_iops_sec=0," +
				"total_bytes_sec_max=0,read_bytes_sec_max=0,write_bytes_sec_max=0,total_iops_sec_max=0,read_iops_sec_max=0,write_iops_sec_max=0,size_iops_sec=0,group_name=g"},
		{"remove", &domainxml.IOTune{TotalIopsSec: 100}, nil,
			"total_bytes_sec=0,read_bytes_sec=0,write_bytes_sec=0,total_iops_sec=0,read_iops_sec=0,write_iops_sec=0," +
				"total_bytes_sec_max=0,read_bytes_sec_max=0,write_bytes_sec_max=0,total_iops_sec_max=0,read_iops_sec_max=0,write_iops_sec_max=0,size_iops_sec=0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake()
			f.status = running(true)
			res, err := Apply(context.Background(), f, Change{ID: "u", Name: "web", Old: withDisk(c.old), New: withDisk(c.new), Running: true})
			if err != nil {
				t.Fatal(err)
			}
			if res.Method != domainxml.ChangeLive || res.Started || res.Forced {
				t.Errorf("result %+v", res)
			}
			if want := []string{"GetDomainStatus u", "SetBlockIOTune u vda " + c.params}; strings.Join(f.calls, "\n") != strings.Join(want, "\n") {
				t.Errorf("calls\n%s\nwant\n%s", strings.Join(f.calls, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// TestApplyLiveIOTuneWithSizing: sizing first, then the limits; both live.
func TestApplyLiveIOTuneWithSizing(t *testing.T) {
	f := newFake()
	f.status = running(true)
	next := withDisk(&domainxml.IOTune{TotalIopsSec: 10})
	next.VCPU = 2
	if _, err := Apply(context.Background(), f, Change{ID: "u", Name: "web", Old: withDisk(nil), New: next, Running: true}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.called(), " "); got != "GetDomainStatus SetDomainSizing SetBlockIOTune" {
		t.Errorf("calls %s", got)
	}
}

// TestApplyIOTuneNotLive: stopped, the definition is written; with another disk change,
// or a group name removed while limits stay, the running domain restarts.
func TestApplyIOTuneNotLive(t *testing.T) {
	withCache := withDisk(&domainxml.IOTune{TotalIopsSec: 10})
	withCache.Disks[0].Cache = "none"
	cases := []struct {
		name     string
		active   bool
		old, new domainxml.Spec
		want     domainxml.Change
		calls    string
	}{
		{"stopped", false, withDisk(nil), withDisk(&domainxml.IOTune{TotalIopsSec: 10}), domainxml.ChangeDefinition, "GetDomainStatus DefineDomain"},
		{"with cache", true, withDisk(nil), withCache, domainxml.ChangeRestart, "GetDomainStatus DefineDomain ShutdownDomain StartDomain"},
		{"group removed", true, withDisk(&domainxml.IOTune{TotalIopsSec: 10, GroupName: "g"}), withDisk(&domainxml.IOTune{TotalIopsSec: 10}),
			domainxml.ChangeRestart, "GetDomainStatus DefineDomain ShutdownDomain StartDomain"},
	}
	for _, c := range cases {
		f := newFake()
		f.status = running(c.active)
		res, err := Apply(context.Background(), f, Change{ID: "u", Name: "web", Old: c.old, New: c.new, Running: c.active})
		if err != nil {
			t.Fatal(c.name, err)
		}
		if got := strings.Join(f.called(), " "); res.Method != c.want || got != c.calls {
			t.Errorf("%s: %s, calls %s; want %s, %s", c.name, res.Method, got, c.want, c.calls)
		}
	}
}

// TestApplyLiveIOTuneFailure: a failed live call stops there (no restart, no definition)
// and its error names the disk and the domain.
func TestApplyLiveIOTuneFailure(t *testing.T) {
	f := newFake()
	f.status = running(true)
	f.fail["SetBlockIOTune"] = errInjected
	old := withDisk(nil)
	next := withDisk(&domainxml.IOTune{TotalIopsSec: 10})
	old.Disks = append(old.Disks, domainxml.Disk{Path: "/pool/b.raw", Device: domainxml.DeviceDisk, Bus: "virtio", Target: "vdb", Format: "raw"})
	next.Disks = append(next.Disks, domainxml.Disk{Path: "/pool/b.raw", Device: domainxml.DeviceDisk, Bus: "virtio", Target: "vdb", Format: "raw",
		DiskTuning: domainxml.DiskTuning{IOTune: &domainxml.IOTune{ReadIopsSec: 5}}})
	res, err := Apply(context.Background(), f, Change{ID: "u", Name: "web", Old: old, New: next, Running: true, Rewrite: true})
	if !errors.Is(err, errInjected) || !strings.Contains(err.Error(), "disk vda of running domain web") {
		t.Fatalf("err %v", err)
	}
	if got := strings.Join(f.called(), " "); res.Method != domainxml.ChangeLive || got != "GetDomainStatus SetBlockIOTune" {
		t.Errorf("%s, calls %s", res.Method, got)
	}
}
