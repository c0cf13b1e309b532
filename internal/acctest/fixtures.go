package acctest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// Fixtures that acceptance tests make directly through libvirt, so that a test depends
// on no resource of the provider but the one it tests: the tiny guest image uploaded
// once per run, qcow2 overlays on it, NoCloud seeds made with genisoimage, an isolated
// network, and what a test does to a domain behind Terraform's back. Each removes what it
// made when the test ends.

// Ctx is a context for one fixture step: three minutes, ended with the test.
func Ctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

var (
	baseOnce sync.Once
	baseKey  string
	baseCap  uint64
	baseErr  error
)

// BaseImage is the tiny guest image in the test pool (tfacc-base-<hash>.qcow2), uploaded
// once per test process and kept (the sweeper removes it); overlays use it as their
// backing file. It returns the volume's key (its path) and capacity.
func BaseImage(t testing.TB) (string, uint64) {
	t.Helper()
	img := GuestImage(t)
	baseOnce.Do(func() { baseKey, baseCap, baseErr = uploadBase(img) })
	if baseErr != nil {
		t.Fatalf("upload the guest image: %v", baseErr)
	}
	return baseKey, baseCap
}

func uploadBase(img string) (string, uint64, error) {
	data, err := os.ReadFile(img)
	if err != nil {
		return "", 0, err
	}
	sum := sha256.Sum256(data)
	name := "tfacc-base-" + hex.EncodeToString(sum[:6]) + ".qcow2"
	c, err := libvirt.NewClient(libvirt.Config{URI: URI(), MaxConnections: 2})
	if err != nil {
		return "", 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	doc, err := volumeXML(name, uint64(len(data)), "raw", "")
	if err != nil {
		return "", 0, err
	}
	var key string
	var capacity uint64
	err = c.Write(ctx, "upload "+name, func(l *golibvirt.Libvirt) error {
		pool, err := l.StoragePoolLookupByName(Pool())
		if err != nil {
			return err
		}
		vol, err := l.StorageVolLookupByName(pool, name)
		if err != nil {
			var lerr golibvirt.Error
			if !errors.As(err, &lerr) || golibvirt.ErrorNumber(lerr.Code) != golibvirt.ErrNoStorageVol {
				return err
			}
			if vol, err = l.StorageVolCreateXML(pool, doc, 0); err != nil {
				return err
			}
			if err := l.StorageVolUpload(vol, bytes.NewReader(data), 0, uint64(len(data)), 0); err != nil {
				_ = l.StorageVolDelete(vol, 0)
				return err
			}
			// Best effort: refused while another test's upload runs in the pool.
			_ = l.StoragePoolRefresh(pool, 0)
			if vol, err = l.StorageVolLookupByName(pool, name); err != nil {
				return err
			}
		}
		if key, err = l.StorageVolGetPath(vol); err != nil {
			return err
		}
		_, capacity, _, err = l.StorageVolGetInfo(vol)
		return err
	})
	return key, capacity, err
}

// volumeXML is a volume of the given size and format, on backing when not empty.
func volumeXML(name string, capacity uint64, format, backing string) (string, error) {
	v := libvirtxml.StorageVolume{
		Name:     name,
		Capacity: &libvirtxml.StorageVolumeSize{Unit: "bytes", Value: capacity},
		Target:   &libvirtxml.StorageVolumeTarget{Format: &libvirtxml.StorageVolumeTargetFormat{Type: format}},
	}
	if backing != "" {
		v.BackingStore = &libvirtxml.StorageVolumeBackingStore{Path: backing, Format: &libvirtxml.StorageVolumeTargetFormat{Type: "qcow2"}}
	}
	return v.Marshal()
}

// Overlay makes a qcow2 overlay on the guest image in the test pool and returns its key
// (its path).
func Overlay(t testing.TB, name string) string {
	t.Helper()
	base, capacity := BaseImage(t)
	doc, err := volumeXML(name, capacity, "qcow2", base)
	if err != nil {
		t.Fatal(err)
	}
	return CreateVolume(t, name, doc, nil)
}

// DomainDisk starts an acceptance test of a domain: it skips without a libvirt host (see
// RequireAcc), else gives a fresh name of kind and a qcow2 overlay of its own, <name>.qcow2.
func DomainDisk(t *testing.T, kind string) (name, disk string) {
	t.Helper()
	RequireAcc(t)
	name = RandomName(kind)
	return name, Overlay(t, name+".qcow2")
}

// Seed makes a NoCloud seed ISO (label cidata) with the given hostname in the test pool
// and returns its key.
func Seed(t testing.TB, name, hostname string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"meta-data": fmt.Sprintf("instance-id: %s\nlocal-hostname: %s\n", name, hostname),
		"user-data": "#cloud-config\n",
	}
	for f, content := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	iso := filepath.Join(dir, "seed.iso")
	out, err := exec.Command("genisoimage", "-quiet", "-V", "cidata", "-J", "-r", "-o", iso,
		filepath.Join(dir, "meta-data"), filepath.Join(dir, "user-data")).CombinedOutput()
	if err != nil {
		t.Fatalf("genisoimage: %v: %s", err, out)
	}
	data, err := os.ReadFile(iso)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := volumeXML(name, uint64(len(data)), "raw", "")
	if err != nil {
		t.Fatal(err)
	}
	return CreateVolume(t, name, doc, data)
}

// CreateVolume makes a volume in the test pool from its XML (and uploads upload into it
// when not nil); it is deleted when the test ends. It returns the key.
func CreateVolume(t testing.TB, name, doc string, upload []byte) string {
	t.Helper()
	c := Client(t)
	var key string
	err := c.Write(Ctx(t), "create volume "+name, func(l *golibvirt.Libvirt) error {
		pool, err := l.StoragePoolLookupByName(Pool())
		if err != nil {
			return err
		}
		vol, err := l.StorageVolCreateXML(pool, doc, 0)
		if err != nil {
			return err
		}
		if upload != nil {
			if err := l.StorageVolUpload(vol, bytes.NewReader(upload), 0, uint64(len(upload)), 0); err != nil {
				return err
			}
		}
		key, err = l.StorageVolGetPath(vol)
		return err
	})
	if err != nil {
		t.Fatalf("create volume %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = c.Write(ctx, "delete volume "+name, func(l *golibvirt.Libvirt) error {
			vol, err := l.StorageVolLookupByKey(key)
			if err != nil {
				return err
			}
			return l.StorageVolDelete(vol, 0)
		})
	})
	return key
}

// IsolatedNetwork defines and starts a network with no address and no DHCP: a guest on it
// never gets a lease. It returns the network's bridge; the network goes with the test.
func IsolatedNetwork(t testing.TB, name string) string {
	t.Helper()
	bridge := "tfbr" + name[len(name)-6:]
	DefineNetwork(t, &libvirtxml.Network{Name: name, Bridge: &libvirtxml.NetworkBridge{Name: bridge, STP: "off"}}, true)
	return bridge
}

// DomainLive is what libvirt says about a domain right now.
type DomainLive struct {
	ID       int32 // running id (-1 when not running)
	Active   bool
	Live     *libvirtxml.Domain
	Inactive *libvirtxml.Domain
	// InactiveXML is the persistent definition as libvirt printed it (what libvirtxml
	// drops, such as a namespace declared on <metadata>, is still there).
	InactiveXML string
}

// SameRunningDomain is InspectDomain that also fails unless the domain runs with the
// running id *id: the first call records it (id 0), later ones prove that a live change
// did not restart the domain.
func SameRunningDomain(t testing.TB, name string, id *int32) (*DomainLive, error) {
	d, err := InspectDomain(t, name)
	if err != nil {
		return nil, err
	}
	if *id == 0 {
		*id = d.ID
	}
	if !d.Active || d.ID != *id {
		return nil, fmt.Errorf("domain %s: id %d (first %d), active %v: want the same running domain", name, d.ID, *id, d.Active)
	}
	return d, nil
}

// InspectDomain reads a domain's state and both its definitions.
func InspectDomain(t testing.TB, name string) (*DomainLive, error) {
	out := &DomainLive{}
	err := Client(t).Read(Ctx(t), "inspect domain "+name, func(l *golibvirt.Libvirt) error {
		d, err := l.DomainLookupByName(name)
		if err != nil {
			return err
		}
		out.ID = d.ID
		a, err := l.DomainIsActive(d)
		if err != nil {
			return err
		}
		out.Active = a == 1
		for _, x := range []struct {
			flags golibvirt.DomainXMLFlags
			into  **libvirtxml.Domain
		}{{0, &out.Live}, {golibvirt.DomainXMLInactive, &out.Inactive}} {
			text, err := l.DomainGetXMLDesc(d, x.flags)
			if err != nil {
				return err
			}
			var dom libvirtxml.Domain
			if err := dom.Unmarshal(text); err != nil {
				return err
			}
			*x.into = &dom
			if x.into == &out.Inactive {
				out.InactiveXML = text
			}
		}
		return nil
	})
	return out, err
}

// Leases are the current DHCP leases of a network, by MAC.
func Leases(t testing.TB, network string) (map[string][]libvirt.Lease, error) {
	return Client(t).NetworkLeases(Ctx(t), network)
}

// DefineDomain defines a domain from XML, as `virsh define` does, and returns its UUID.
func DefineDomain(t testing.TB, doc string) string {
	t.Helper()
	var id string
	err := Client(t).Write(Ctx(t), "define domain", func(l *golibvirt.Libvirt) error {
		d, err := l.DomainDefineXML(doc)
		id = libvirt.UUIDString(d)
		return err
	})
	if err != nil {
		t.Fatalf("define domain: %v", err)
	}
	return id
}

// StartDomain starts a defined domain, as `virsh start` does.
func StartDomain(t testing.TB, name string) {
	t.Helper()
	onDomain(t, "start", name, func(l *golibvirt.Libvirt, d golibvirt.Domain) error { return l.DomainCreate(d) })
}

// SuspendDomain pauses a running domain's vCPUs, as `virsh suspend` does: the guest
// answers nothing (no agent, no unplug) until ResumeDomain.
func SuspendDomain(t testing.TB, name string) {
	t.Helper()
	onDomain(t, "suspend", name, func(l *golibvirt.Libvirt, d golibvirt.Domain) error { return l.DomainSuspend(d) })
}

// ResumeDomain lets a suspended domain run again, as `virsh resume` does.
func ResumeDomain(t testing.TB, name string) {
	t.Helper()
	onDomain(t, "resume", name, func(l *golibvirt.Libvirt, d golibvirt.Domain) error { return l.DomainResume(d) })
}

// RestartDomain powers a running domain off and starts it again (`virsh destroy` and
// `virsh start`): a new run, with a new domain id.
func RestartDomain(t testing.TB, name string) {
	t.Helper()
	onDomain(t, "restart", name, func(l *golibvirt.Libvirt, d golibvirt.Domain) error {
		if err := l.DomainDestroy(d); err != nil {
			return err
		}
		return l.DomainCreate(d)
	})
}

// RemoveDomainAtEnd removes the named domain (forced off, with its varstore) when the test
// ends, if it is still there: for domains a test defines itself.
func RemoveDomainAtEnd(t testing.TB, name string) {
	c := Client(t)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = c.Write(ctx, "remove domain "+name, func(l *golibvirt.Libvirt) error {
			d, err := l.DomainLookupByName(name)
			if err != nil {
				return err
			}
			_ = l.DomainDestroy(d)
			return l.DomainUndefineFlags(d, libvirt.DomainUndefineAll)
		})
	})
}

// onDomain runs fn on the named domain: what a test does behind Terraform's back.
func onDomain(t testing.TB, op, name string, fn func(*golibvirt.Libvirt, golibvirt.Domain) error) {
	t.Helper()
	err := Client(t).Write(Ctx(t), op+" domain "+name, func(l *golibvirt.Libvirt) error {
		d, err := l.DomainLookupByName(name)
		if err != nil {
			return err
		}
		return fn(l, d)
	})
	if err != nil {
		t.Fatalf("%s domain %s: %v", op, name, err)
	}
}

// UndefineDomain removes a domain (and its varstore) behind Terraform's back.
func UndefineDomain(t testing.TB, name string) {
	t.Helper()
	onDomain(t, "undefine", name, func(l *golibvirt.Libvirt, d golibvirt.Domain) error {
		_ = l.DomainDestroy(d)
		return l.DomainUndefineFlags(d, libvirt.DomainUndefineAll)
	})
}

// ForceOff powers a domain off behind Terraform's back.
func ForceOff(t testing.TB, name string) {
	t.Helper()
	onDomain(t, "destroy", name, func(l *golibvirt.Libvirt, d golibvirt.Domain) error { return l.DomainDestroy(d) })
}
