package provider_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// Disks for domain acceptance tests are made here, directly through libvirt, so these
// tests depend on no other resource of the provider: a copy of the tiny guest image
// uploaded once per run, qcow2 overlays on it, NoCloud seed ISOs made with genisoimage.

func domAccCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

var (
	domAccBaseOnce sync.Once
	domAccBaseKey  string
	domAccBaseCap  uint64
	domAccBaseErr  error
)

// domAccBase is the tiny guest image in the test pool (tfacc-base-<hash>.qcow2), uploaded
// once per test process; overlays use it as their backing file.
func domAccBase(t *testing.T) (string, uint64) {
	t.Helper()
	img := acctest.GuestImage(t)
	domAccBaseOnce.Do(func() {
		domAccBaseKey, domAccBaseCap, domAccBaseErr = domAccUploadBase(img)
	})
	if domAccBaseErr != nil {
		t.Fatalf("upload the guest image: %v", domAccBaseErr)
	}
	return domAccBaseKey, domAccBaseCap
}

func domAccUploadBase(img string) (string, uint64, error) {
	data, err := os.ReadFile(img)
	if err != nil {
		return "", 0, err
	}
	sum := sha256.Sum256(data)
	name := "tfacc-base-" + hex.EncodeToString(sum[:6]) + ".qcow2"
	c, err := libvirt.NewClient(libvirt.Config{URI: acctest.URI(), MaxConnections: 2})
	if err != nil {
		return "", 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var key string
	var capacity uint64
	err = c.Write(ctx, "upload "+name, func(l *golibvirt.Libvirt) error {
		pool, err := l.StoragePoolLookupByName(acctest.Pool())
		if err != nil {
			return err
		}
		vol, err := l.StorageVolLookupByName(pool, name)
		if err != nil {
			var lerr golibvirt.Error
			if !errors.As(err, &lerr) || golibvirt.ErrorNumber(lerr.Code) != golibvirt.ErrNoStorageVol {
				return err
			}
			xml := fmt.Sprintf(`<volume><name>%s</name><capacity unit='bytes'>%d</capacity><target><format type='raw'/></target></volume>`, name, len(data))
			if vol, err = l.StorageVolCreateXML(pool, xml, 0); err != nil {
				return err
			}
			if err := l.StorageVolUpload(vol, strings.NewReader(string(data)), 0, uint64(len(data)), 0); err != nil {
				_ = l.StorageVolDelete(vol, 0)
				return err
			}
			if err := l.StoragePoolRefresh(pool, 0); err != nil {
				return err
			}
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

// domAccOverlay makes a qcow2 overlay on the guest image and returns its key (path).
func domAccOverlay(t *testing.T, name string) string {
	t.Helper()
	base, capacity := domAccBase(t)
	xml := fmt.Sprintf(`<volume><name>%s</name><capacity unit='bytes'>%d</capacity><target><format type='qcow2'/></target>
<backingStore><path>%s</path><format type='qcow2'/></backingStore></volume>`, name, capacity, base)
	return domAccCreateVolume(t, name, xml, nil)
}

// domAccSeed makes a NoCloud seed ISO (label cidata) with the given hostname.
func domAccSeed(t *testing.T, name, hostname string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"meta-data": fmt.Sprintf("instance-id: %s\nlocal-hostname: %s\n", name, hostname),
		"user-data": "#cloud-config\n",
	}
	for f, content := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(content), 0o644); err != nil {
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
	xml := fmt.Sprintf(`<volume><name>%s</name><capacity unit='bytes'>%d</capacity><target><format type='raw'/></target></volume>`, name, len(data))
	return domAccCreateVolume(t, name, xml, data)
}

func domAccCreateVolume(t *testing.T, name, xml string, upload []byte) string {
	t.Helper()
	c := acctest.Client(t)
	ctx := domAccCtx(t)
	var key string
	err := c.Write(ctx, "create volume "+name, func(l *golibvirt.Libvirt) error {
		pool, err := l.StoragePoolLookupByName(acctest.Pool())
		if err != nil {
			return err
		}
		vol, err := l.StorageVolCreateXML(pool, xml, 0)
		if err != nil {
			return err
		}
		if upload != nil {
			if err := l.StorageVolUpload(vol, strings.NewReader(string(upload)), 0, uint64(len(upload)), 0); err != nil {
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

// domAccIsolatedNetwork defines and starts a network with no IP and no DHCP: a guest on
// it never gets a lease. It returns the network's bridge.
func domAccIsolatedNetwork(t *testing.T, name string) string {
	t.Helper()
	c := acctest.Client(t)
	ctx := domAccCtx(t)
	bridge := "tfbr" + name[len(name)-6:]
	xml := fmt.Sprintf(`<network><name>%s</name><bridge name='%s' stp='off'/></network>`, name, bridge)
	err := c.Write(ctx, "define network "+name, func(l *golibvirt.Libvirt) error {
		n, err := l.NetworkDefineXML(xml)
		if err != nil {
			return err
		}
		return l.NetworkCreate(n)
	})
	if err != nil {
		t.Fatalf("network %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = c.Write(ctx, "remove network "+name, func(l *golibvirt.Libvirt) error {
			n, err := l.NetworkLookupByName(name)
			if err != nil {
				return err
			}
			_ = l.NetworkDestroy(n)
			return l.NetworkUndefine(n)
		})
	})
	return bridge
}

// domAccLive is what libvirt says about a domain right now.
type domAccLive struct {
	ID       int32 // running id (-1 when not running)
	Active   bool
	Live     *libvirtxml.Domain
	Inactive *libvirtxml.Domain
}

func domAccInspect(t *testing.T, name string) (*domAccLive, error) {
	c := acctest.Client(t)
	ctx := domAccCtx(t)
	out := &domAccLive{}
	err := c.Read(ctx, "inspect domain "+name, func(l *golibvirt.Libvirt) error {
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
		}
		return nil
	})
	return out, err
}

// domAccLeases are the current DHCP leases of a network.
func domAccLeases(t *testing.T, network string) (map[string][]libvirt.Lease, error) {
	return acctest.Client(t).NetworkLeases(domAccCtx(t), network)
}

// domAccDefine defines a domain from XML, as `virsh define` does.
func domAccDefine(t *testing.T, xml string) {
	t.Helper()
	c := acctest.Client(t)
	err := c.Write(domAccCtx(t), "define domain", func(l *golibvirt.Libvirt) error {
		_, err := l.DomainDefineXML(xml)
		return err
	})
	if err != nil {
		t.Fatalf("define domain: %v", err)
	}
}

// domAccUndefine removes a domain behind Terraform's back.
func domAccUndefine(t *testing.T, name string) {
	t.Helper()
	c := acctest.Client(t)
	err := c.Write(domAccCtx(t), "undefine domain "+name, func(l *golibvirt.Libvirt) error {
		d, err := l.DomainLookupByName(name)
		if err != nil {
			return err
		}
		_ = l.DomainDestroy(d)
		return l.DomainUndefineFlags(d, libvirt.DomainUndefineAll)
	})
	if err != nil {
		t.Fatalf("undefine domain %s: %v", name, err)
	}
}

// domAccForceOff powers a domain off behind Terraform's back.
func domAccForceOff(t *testing.T, name string) {
	t.Helper()
	c := acctest.Client(t)
	err := c.Write(domAccCtx(t), "destroy domain "+name, func(l *golibvirt.Libvirt) error {
		d, err := l.DomainLookupByName(name)
		if err != nil {
			return err
		}
		return l.DomainDestroy(d)
	})
	if err != nil {
		t.Fatalf("destroy domain %s: %v", name, err)
	}
}
