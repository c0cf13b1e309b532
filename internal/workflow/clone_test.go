package workflow

import (
	"context"
	"fmt"
	"strings"
	"testing"

	golibvirt "github.com/digitalocean/go-libvirt"
	"github.com/google/uuid"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

const srcUUID = "0b6f0c4e-9a1d-4d2e-8c3b-5e7f9a1b2c3d"

func sourceXML(uefi bool) string {
	os := `<os><type arch="x86_64" machine="pc-q35-7.2">hvm</type></os>`
	if uefi {
		os = `<os firmware="efi"><type arch="x86_64" machine="pc-q35-7.2">hvm</type><nvram>/var/lib/libvirt/qemu/nvram/web_VARS.fd</nvram></os>`
	}
	return `<domain type="qemu"><name>web</name><uuid>` + srcUUID + `</uuid>` +
		`<memory unit="KiB">524288</memory><currentMemory unit="KiB">262144</currentMemory><vcpu placement="static" current="1">2</vcpu>` + os +
		`<devices><disk type="file" device="disk"><driver name="qemu" type="qcow2"/><source file="/pool/web.qcow2"/><target dev="vda" bus="virtio"/></disk>` +
		`<disk type="file" device="disk"><driver name="qemu" type="qcow2"/><source file="/pool/web-data.qcow2"/><target dev="vdb" bus="virtio"/></disk>` +
		`<interface type="network"><mac address="52:54:00:00:00:01"/><source network="default"/><model type="virtio"/></interface></devices></domain>`
}

func withSource(f *fake, active, uefi bool) {
	u := uuid.MustParse(srcUUID)
	f.source = &libvirt.DomainStatus{Domain: libvirt.Domain{Name: "web", UUID: golibvirt.UUID(u)}, Active: active, State: "shutoff", XML: sourceXML(uefi)}
	if active {
		f.source.State, f.source.LiveXML = "running", sourceXML(uefi)
	}
}

func cloneReq() CloneRequest {
	return CloneRequest{SourceID: "web", Name: "web2", Mode: domainxml.CloneLinked, Running: true, CloudinitID: "default/seed.iso"}
}

// TestClone: what each kind of clone makes, in order.
func TestClone(t *testing.T) {
	cases := []struct {
		name         string
		active, uefi bool
		mode         string
		calls        string
		warns        int
	}{
		{"linked, shut-off source", false, false, domainxml.CloneLinked,
			"LookupDomain GetDomainStatus DiskVolumeByPath DiskVolumeByPath PoolExists DiskSource CreateVolumeOver CreateVolumeOver DefineDomain StartDomain", 1},
		{"full, shut-off source", false, false, domainxml.CloneFull,
			"LookupDomain GetDomainStatus DiskVolumeByPath DiskVolumeByPath PoolExists DiskSource CloneVolume CloneVolume DefineDomain StartDomain", 0},
		{"linked, running source", true, false, domainxml.CloneLinked,
			"LookupDomain GetDomainStatus DiskVolumeByPath DiskVolumeByPath PoolExists DiskSource CreateVolumeOver CopyDiskLive VolumeInfo CreateVolumeOver CopyDiskLive VolumeInfo DefineDomain StartDomain", 0},
		{"full, running UEFI source", true, true, domainxml.CloneFull,
			"LookupDomain GetDomainStatus DiskVolumeByPath DiskVolumeByPath PoolExists DiskSource CreateVolumeOver CopyDiskLive VolumeInfo CreateVolumeOver CopyDiskLive VolumeInfo DefineDomain SuspendDomain CopyNVRAM ResumeDomain StartDomain", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake()
			withSource(f, c.active, c.uefi)
			req := cloneReq()
			req.Mode = c.mode
			res, err := Clone(context.Background(), f, req)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(f.called(), " "); got != c.calls {
				t.Errorf("calls\n got %s\nwant %s", got, c.calls)
			}
			if len(res.Warnings) != c.warns || f.defined[res.ID] != "web2" || len(f.volumes) != 2 {
				t.Errorf("result %+v, defined %v, volumes %d", res, f.defined, len(f.volumes))
			}
		})
	}
}

// TestCloneRollback fails every call of a clone in turn: whatever had been made when the
// failure came — disks, the domain — is removed again, and the error says which step
// failed. A rollback step that is left out leaves something in the fake's host.
func TestCloneRollback(t *testing.T) {
	for _, active := range []bool{false, true} {
		f := newFake()
		withSource(f, active, true)
		if _, err := Clone(context.Background(), f, cloneReq()); err != nil {
			t.Fatal(err)
		}
		total := len(f.calls)
		for i := range total {
			for _, inject := range []error{errInjected, errLost} {
				f := newFake()
				withSource(f, active, true)
				f.failAt[i] = inject
				_, err := Clone(context.Background(), f, cloneReq())
				step := "?"
				if i < len(f.calls) {
					step = f.calls[i]
				}
				if err == nil {
					t.Errorf("active=%t: failure of call %d (%s) not reported", active, i, step)
					continue
				}
				if len(f.defined) != 0 || len(f.volumes) != 0 {
					t.Errorf("active=%t: after a failed %s (%v), left behind: domains %v, volumes %v; calls %v", active, step, inject, f.defined, keys(f.volumes), f.calls)
				}
				rolledBack := strings.Contains(strings.Join(f.called()[i+1:], " "), "DeleteVolume") ||
					strings.Contains(strings.Join(f.called()[i+1:], " "), "UndefineDomain")
				if rolledBack && !strings.Contains(err.Error(), "removed again") {
					t.Errorf("active=%t: failed %s: the error does not say what was rolled back: %v", active, step, err)
				}
			}
		}
	}
}

// TestCloneRollbackFailure: a rollback that cannot remove something says what to remove.
func TestCloneRollbackFailure(t *testing.T) {
	f := newFake()
	withSource(f, false, false)
	f.fail["StartDomain"] = errInjected
	f.fail["UndefineDomain"] = fmt.Errorf("undefine: %w", errInjected)
	_, err := Clone(context.Background(), f, cloneReq())
	if err == nil || !strings.Contains(err.Error(), "remove these by hand") || !strings.Contains(err.Error(), "half-made domain") {
		t.Fatalf("err %v", err)
	}
	if len(f.volumes) != 0 {
		t.Errorf("volumes left although only the domain could not be removed: %v", keys(f.volumes))
	}
}

// TestCloneChecksBeforeMaking: a taken name, a missing source or pool fail before
// anything is made.
func TestCloneChecksBeforeMaking(t *testing.T) {
	f := newFake()
	withSource(f, false, false)
	f.defined["11111111-2222-3333-4444-555555555555"] = "web2"
	if _, err := Clone(context.Background(), f, cloneReq()); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("taken name: %v", err)
	}
	f = newFake()
	if _, err := Clone(context.Background(), f, cloneReq()); err == nil || !strings.Contains(err.Error(), `source domain "web" does not exist`) {
		t.Errorf("missing source: %v", err)
	}
	f = newFake()
	withSource(f, false, false)
	req := cloneReq()
	req.Pool = "nopool"
	if _, err := Clone(context.Background(), f, req); err == nil || !strings.Contains(err.Error(), `pool "nopool"`) || len(f.volumes) != 0 {
		t.Errorf("missing pool: %v", err)
	}
	req = cloneReq()
	req.VCPU = 64 // above the source's ceiling of 2
	if _, err := Clone(context.Background(), f, req); err == nil || !strings.Contains(err.Error(), "vcpu 64") || len(f.volumes) != 0 {
		t.Errorf("vcpu above the ceiling: %v", err)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestCloneKeepsDiskUnderRunningJob: a block copy that could not be ended may still write
// into the clone's new disk: the rollback keeps that one (removing the rest) and the
// error says how to end the job and remove it.
func TestCloneKeepsDiskUnderRunningJob(t *testing.T) {
	f := newFake()
	withSource(f, true, false)
	f.fail["CopyDiskLive"] = &libvirt.BlockJobRunningError{Domain: "web", Disk: "vda", Dest: "/pool/web2-vda.qcow2", Err: errInjected}
	_, err := Clone(context.Background(), f, cloneReq())
	if err == nil || !strings.Contains(err.Error(), "virsh blockjob web vda --abort") || !strings.Contains(err.Error(), "virsh vol-delete --pool default web2-vda.qcow2") {
		t.Fatalf("err %v", err)
	}
	if len(f.volumes) != 1 || f.volumes["/pool/web2-vda.qcow2"] == nil || len(f.defined) != 0 {
		t.Errorf("left: volumes %v, domains %v; want only the disk the job may still write into", keys(f.volumes), f.defined)
	}
}

// A linked clone of a shut-off source names each overlay's backing format as the source
// domain's definition reads the disk (the creator's word), not as libvirt probes the
// volume: a raw disk whose guest wrote a qcow2 header stays raw under the overlay, and
// QEMU never follows the backing file the header names.
func TestCloneLinkedBackingFormatFromDefinition(t *testing.T) {
	f := newFake()
	withSource(f, false, false)
	f.source.XML = strings.Replace(f.source.XML, `<driver name="qemu" type="qcow2"/><source file="/pool/web-data.qcow2"/>`,
		`<driver name="qemu" type="raw"/><source file="/pool/web-data.qcow2"/>`, 1)
	if _, err := Clone(context.Background(), f, cloneReq()); err != nil {
		t.Fatal(err)
	}
	want := "/pool/web.qcow2 as qcow2 /pool/web-data.qcow2 as raw"
	if got := strings.Join(f.overlays, " "); got != want {
		t.Errorf("overlays\n got %s\nwant %s", got, want)
	}
}
