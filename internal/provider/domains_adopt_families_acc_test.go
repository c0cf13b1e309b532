package provider_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// A domain a virsh user defined by hand with every device family the provider manages
// at once, in the few lines such a user writes (libvirt fills in addresses, aliases,
// controllers, default driver names, the Open vSwitch interface id): imported with
// `plan -generate-config-out`, the generated configuration must plan clean; its first
// rewrite (a vcpu more) must keep every device and plan clean again; destroying it must
// remove the domain. Twice: with every family's settings, and with libvirt's defaults
// left out. The domain is never started, so hostdevs name devices this host lacks (the
// plan checks them only for a domain that is to run), the direct NICs links it lacks,
// the network disks servers nobody runs: libvirt checks all that at start.
func TestAccDomainAdopt_everyFamily(t *testing.T) {
	acctest.RequireAcc(t)
	for _, tc := range []struct {
		name string
		xml  func(d familyDomain) string
		// wants are words the generated configuration must hold.
		wants []string
	}{
		{"asWritten", everyFamilyXML, []string{"filesystem", "iotune", "network_source", "hostdev", "virtualport", "bandwidth", "filter"}},
		{"defaulted", everyFamilyDefaultsXML, []string{"filesystem", "iotune", "group_name", "network_source", "secret_id", "hostdev", "802.1Qbg", "802.1Qbh", "vlan"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := familyDomain{secretID: uuid.NewString(), code: t.TempDir(), data: t.TempDir()}
			d.name, d.root = acctest.DomainDisk(t, "adoptall")
			d.shared = acctest.CreateVolume(t, d.name+"-shared.raw", rawVolumeXML(d.name+"-shared.raw"), nil)
			d.scsi = acctest.Overlay(t, d.name+"-scsi.qcow2")
			d.iso = acctest.Seed(t, d.name+"-seed.iso", d.name)
			d.cephUsage = "client." + d.name + " secret"
			acctest.DefineSecret(t, d.secretID, "ceph", d.cephUsage)
			acctest.DefineDomain(t, tc.xml(d))
			acctest.RemoveDomainAtEnd(t, d.name)
			adoptPlansCleanAndDestroys(t, d.name, append(tc.wants, d.secretID))
		})
	}
}

// adoptPlansCleanAndDestroys imports the domain name with -generate-config-out, which
// must plan clean and hold every word of wants; then, owned by that configuration, the
// domain takes a vcpu more without losing a device, and must go with a destroy (asked
// from libvirt).
func adoptPlansCleanAndDestroys(t *testing.T, name string, wants []string) {
	t.Helper()
	generated := generateConfigPlansClean(t, "libvirt_domain.all", name)
	for _, want := range wants {
		if !strings.Contains(generated, want) {
			t.Errorf("the generated configuration has no %s:\n%s", want, generated)
		}
	}
	w := newCLIWork(t, acctest.ProviderBlock("")+fmt.Sprintf("import {\n  to = libvirt_domain.all\n  id = %q\n}\n", name)+generated)
	if out, code := w.run("apply", "-auto-approve", "-input=false"); code != 0 || !strings.Contains(out, "1 imported, 0 added, 0 changed, 0 destroyed") {
		t.Fatalf("import with the generated config (exit %d):\n%s", code, out)
	}
	before := countDevices(t, name)
	// The first rewrite of the adopted definition (a vcpu more) keeps every device, and
	// what it wrote reads back as the configuration.
	w.write("main.tf", acctest.ProviderBlock("")+vcpuRe.ReplaceAllString(generated, "${1}2"))
	if out, code := w.run("apply", "-auto-approve", "-input=false"); code != 0 || !strings.Contains(out, "0 added, 1 changed, 0 destroyed") {
		t.Fatalf("a vcpu more (exit %d):\n%s", code, out)
	}
	if out, code := w.run("plan", "-input=false", "-detailed-exitcode"); code != 0 {
		t.Fatalf("the plan after the rewrite is not empty (exit %d):\n%s", code, out)
	}
	if after := countDevices(t, name); after != before {
		t.Fatalf("devices before the rewrite %s, after %s", before, after)
	}
	if out, code := w.run("destroy", "-auto-approve", "-input=false"); code != 0 {
		t.Fatalf("destroy (exit %d):\n%s", code, out)
	}
	if err := acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)})(nil); err != nil {
		t.Fatal(err)
	}
}

var vcpuRe = regexp.MustCompile(`(?m)^(\s*vcpu\s*=\s*)1$`)

// countDevices says how many devices of each family the persistent definition of the
// domain name has (and how many of its disks log in with a secret).
func countDevices(t *testing.T, name string) string {
	t.Helper()
	live, err := acctest.InspectDomain(t, name)
	if err != nil {
		t.Fatal(err)
	}
	dev := live.Inactive.Devices
	authed := 0
	for _, d := range dev.Disks {
		if d.Auth != nil || d.Source != nil && d.Source.Network != nil && d.Source.Network.Auth != nil {
			authed++
		}
	}
	return fmt.Sprintf("%d disks (%d with auth), %d NICs, %d hostdevs, %d filesystems, %d controllers",
		len(dev.Disks), authed, len(dev.Interfaces), len(dev.Hostdevs), len(dev.Filesystems), len(dev.Controllers))
}

// familyDomain is what a hand-written definition names: the domain; root (qcow2),
// shared (raw) and scsi (qcow2) disks; iso, a cdrom's medium; code and data, directories
// to share; a ceph secret (by UUID and usage name) for an rbd disk.
type familyDomain struct {
	name, root, shared, scsi, iso, code, data string
	secretID, cephUsage                       string
}

// rawVolumeXML is an empty 16 MiB raw volume.
func rawVolumeXML(name string) string {
	return fmt.Sprintf(`<volume><name>%s</name><capacity unit='MiB'>16</capacity><target><format type='raw'/></target></volume>`, name)
}

// everyFamilyXML is the hand-written definition, with every family's settings.
func everyFamilyXML(d familyDomain) string {
	return fmt.Sprintf(`<domain type='%s'>
  <name>%s</name>
  <memory unit='MiB'>256</memory>
  <vcpu>1</vcpu>
  <memoryBacking>
    <source type='memfd'/>
    <access mode='shared'/>
  </memoryBacking>
  <os><type arch='x86_64'>hvm</type></os>
  <devices>
    <disk type='file' device='disk'>
      <driver name='qemu' type='qcow2' cache='none' io='native' discard='unmap' detect_zeroes='unmap'/>
      <source file='%s'/>
      <target dev='vda' bus='virtio'/>
      <serial>root-disk</serial>
      <boot order='2'/>
      <iotune>
        <total_bytes_sec>209715200</total_bytes_sec>
        <total_iops_sec>2000</total_iops_sec>
        <total_iops_sec_max>4000</total_iops_sec_max>
      </iotune>
    </disk>
    <disk type='file' device='disk'>
      <driver name='qemu' type='raw' cache='directsync'/>
      <source file='%s'/>
      <target dev='vdb' bus='virtio'/>
      <shareable/>
    </disk>
    <disk type='file' device='disk'>
      <driver name='qemu' type='qcow2'/>
      <source file='%s'/>
      <target dev='sda' bus='scsi'/>
      <wwn>5000c50015ea71ad</wwn>
      <readonly/>
    </disk>
    <disk type='network' device='disk'>
      <driver name='qemu' type='raw'/>
      <source protocol='nbd' name='export'>
        <host name='127.0.0.1' port='10809'/>
      </source>
      <target dev='vdc' bus='virtio'/>
    </disk>
    <disk type='network' device='disk'>
      <driver name='qemu' type='raw' cache='none'/>
      <source protocol='rbd' name='vms/data'>
        <host name='mon1' port='6789'/>
        <auth username='libvirt'>
          <secret type='ceph' uuid='%s'/>
        </auth>
      </source>
      <target dev='vdd' bus='virtio'/>
    </disk>
    <disk type='file' device='cdrom'>
      <source file='%s'/>
      <target dev='sdb' bus='sata'/>
      <readonly/>
    </disk>
    <filesystem type='mount'>
      <driver type='virtiofs'/>
      <source dir='%s'/>
      <target dir='code'/>
    </filesystem>
    <filesystem type='mount' accessmode='mapped'>
      <source dir='%s'/>
      <target dir='data'/>
      <readonly/>
    </filesystem>
    <interface type='network'>
      <source network='%s'/>
      <model type='virtio'/>
      <driver queues='2'/>
      <mtu size='1400'/>
      <link state='down'/>
      <boot order='1'/>
      <rom bar='off'/>
      <bandwidth>
        <inbound average='1000' peak='2000' burst='512'/>
        <outbound average='1000'/>
      </bandwidth>
      <filterref filter='clean-traffic'>
        <parameter name='IP' value='10.0.0.5'/>
      </filterref>
    </interface>
    <interface type='direct' trustGuestRxFilters='yes'>
      <source dev='kvmfam0' mode='bridge'/>
      <model type='virtio'/>
    </interface>
    <interface type='bridge'>
      <source bridge='ovsbr0'/>
      <virtualport type='openvswitch'/>
      <vlan trunk='yes'>
        <tag id='1' nativeMode='untagged'/>
        <tag id='10'/>
        <tag id='20'/>
      </vlan>
      <model type='virtio'/>
    </interface>
    <hostdev mode='subsystem' type='pci' managed='yes'>
      <source><address domain='0x0000' bus='0x04' slot='0x00' function='0x0'/></source>
    </hostdev>
    <hostdev mode='subsystem' type='usb'>
      <source><vendor id='0x1050'/><product id='0x0407'/></source>
    </hostdev>
    <hostdev mode='subsystem' type='usb'>
      <source><address bus='1' device='5'/></source>
    </hostdev>
    <hostdev mode='subsystem' type='mdev' model='vfio-pci'>
      <source><address uuid='c2177883-f1bb-47f0-914d-32a22e3a8804'/></source>
    </hostdev>
    <hostdev mode='subsystem' type='scsi'>
      <source>
        <adapter name='scsi_host0'/>
        <address bus='0' target='3' unit='0'/>
      </source>
    </hostdev>
  </devices>
</domain>`, acctest.DefaultDomainType(), d.name, d.root, d.shared, d.scsi, d.secretID, d.iso, d.code, d.data, acctest.Network())
}

// everyFamilyDefaultsXML is the same families as a user writes them who leaves out what
// libvirt defaults (driver elements, models, modes, managed, the PCI domain, the cdrom's
// readonly) and writes ids in upper case, with the variants the first definition lacks:
// an iothread, an iotune group, an rbd disk whose secret is named by usage, an http
// cdrom, an empty cdrom tray, a single VLAN tag, 802.1Qbg and 802.1Qbh ports, a hostdev
// with boot order and ROM.
func everyFamilyDefaultsXML(d familyDomain) string {
	return fmt.Sprintf(`<domain type='%s'>
  <name>%s</name>
  <memory unit='MiB'>256</memory>
  <vcpu>1</vcpu>
  <iothreads>1</iothreads>
  <memoryBacking><access mode='shared'/></memoryBacking>
  <os><type arch='x86_64'>hvm</type></os>
  <devices>
    <disk type='file' device='disk'>
      <driver name='qemu' type='qcow2' iothread='1' queues='2'/>
      <source file='%s'/>
      <target dev='vda' bus='virtio'/>
      <iotune>
        <read_bytes_sec>1048576</read_bytes_sec>
        <write_bytes_sec>524288</write_bytes_sec>
        <read_iops_sec_max>300</read_iops_sec_max>
        <read_iops_sec>100</read_iops_sec>
        <group_name>slow</group_name>
      </iotune>
    </disk>
    <disk type='file' device='disk'>
      <source file='%s'/>
      <target dev='vdb'/>
    </disk>
    <disk type='file' device='disk'>
      <driver name='qemu' type='qcow2'/>
      <source file='%s'/>
      <target dev='sda' bus='scsi'/>
      <wwn>5000C50015EA71AD</wwn>
      <serial>SCSI.disk-1</serial>
    </disk>
    <disk type='network' device='disk'>
      <driver name='qemu' type='raw'/>
      <source protocol='rbd' name='vms/root'>
        <host name='mon1'/>
        <host name='mon2' port='6789'/>
      </source>
      <auth username='libvirt'>
        <secret type='ceph' usage='%s'/>
      </auth>
      <target dev='vdc' bus='virtio'/>
    </disk>
    <disk type='network' device='cdrom'>
      <driver name='qemu' type='raw'/>
      <source protocol='http' name='/isos/installer.iso'>
        <host name='mirror.invalid' port='80'/>
      </source>
      <target dev='hdc' bus='ide'/>
    </disk>
    <disk type='file' device='cdrom'>
      <source file='%s'/>
      <target dev='hdb' bus='ide'/>
    </disk>
    <disk type='file' device='cdrom'>
      <target dev='hdd' bus='ide'/>
    </disk>
    <filesystem type='mount'>
      <driver type='virtiofs'/>
      <source dir='%s'/>
      <target dir='code'/>
    </filesystem>
    <filesystem type='mount' accessmode='squash'>
      <driver type='path' wrpolicy='immediate'/>
      <source dir='%s'/>
      <target dir='data'/>
    </filesystem>
    <interface type='network'>
      <source network='%s'/>
      <link state='up'/>
    </interface>
    <interface type='bridge'>
      <source bridge='virbr0'/>
      <vlan><tag id='42'/></vlan>
      <model type='e1000'/>
    </interface>
    <interface type='direct' trustGuestRxFilters='no'>
      <source dev='kvmfam0'/>
      <virtualport type='802.1Qbg'>
        <parameters managerid='11' typeid='1193047' typeidversion='2'/>
      </virtualport>
      <model type='virtio'/>
    </interface>
    <interface type='direct'>
      <source dev='kvmfam1' mode='private'/>
      <virtualport type='802.1Qbh'>
        <parameters profileid='finance'/>
      </virtualport>
      <model type='virtio'/>
    </interface>
    <hostdev mode='subsystem' type='pci'>
      <source><address bus='4' slot='0' function='1'/></source>
      <boot order='1'/>
      <rom bar='on'/>
    </hostdev>
    <hostdev mode='subsystem' type='usb' managed='yes'>
      <source><vendor id='0x10DE'/><product id='0x1B80'/></source>
    </hostdev>
    <hostdev mode='subsystem' type='mdev' model='vfio-pci'>
      <source><address uuid='C2177883-F1BB-47F0-914D-32A22E3A8804'/></source>
    </hostdev>
  </devices>
</domain>`, acctest.DefaultDomainType(), d.name, d.root, d.shared, d.scsi, d.cephUsage, d.iso, d.code, d.data, acctest.Network())
}
