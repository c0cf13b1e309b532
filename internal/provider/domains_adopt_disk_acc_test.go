package provider_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// Issue #25 for disks: a domain with disks the disk blocks cannot say (a floppy, an
// empty cdrom tray, a cdrom whose medium is optional, a volume of a pool, an nbd export
// over a unix socket, a gluster image, an rbd image with its ceph.conf and snapshot, a
// SCSI disk on a drive address libvirt would not give it) beside typed ones (a
// 21-character serial, detect_zeroes unmap with discard ignore, rbd without hosts, an
// rbd secret named by usage: secret_id and secret_usage) is
// imported with -generate-config-out: the former go whole into device_xml, the latter
// into disk blocks; it plans clean; a description change keeps every disk as it was;
// destroyed, the generated configuration recreates every disk. The domain is never
// started: libvirt checks the servers and images at start.
func TestAccDomainAdopt_disks(t *testing.T) {
	acctest.RequireAcc(t)
	name, root := acctest.DomainDisk(t, "adoptdisk")
	data := acctest.Overlay(t, name+"-data.qcow2")
	vol := name + "-vol.qcow2"
	acctest.Overlay(t, vol)
	secretID, usage := uuid.NewString(), "client."+name+" secret"
	acctest.DefineSecret(t, secretID, "ceph", usage)
	acctest.DefineDomain(t, fmt.Sprintf(`<domain type='%s'>
  <name>%s</name>
  <memory unit='MiB'>128</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
  <devices>
    <disk type='file' device='disk'>
      <driver name='qemu' type='qcow2' discard='ignore' detect_zeroes='unmap'/>
      <source file='%s'/>
      <target dev='vda' bus='virtio'/>
      <serial>ABCDEFGHIJ0123456789K</serial>
      <boot order='1'/>
    </disk>
    <disk type='volume' device='disk'>
      <driver name='qemu' type='qcow2'/>
      <source pool='%s' volume='%s'/>
      <target dev='vdb' bus='virtio'/>
    </disk>
    <disk type='network' device='disk'>
      <driver name='qemu' type='raw'/>
      <source protocol='nbd' name='bar'><host transport='unix' socket='/run/tfacc25-nbd.sock'/></source>
      <target dev='vdc' bus='virtio'/>
    </disk>
    <disk type='network' device='disk'>
      <driver name='qemu' type='raw'/>
      <source protocol='gluster' name='vol/img.raw'><host name='gluster.invalid' port='24007'/></source>
      <target dev='vdd' bus='virtio'/>
    </disk>
    <disk type='network' device='disk'>
      <driver name='qemu' type='raw'/>
      <source protocol='rbd' name='pool/img'><config file='/etc/ceph/ceph.conf'/><snapshot name='base'/></source>
      <target dev='vde' bus='virtio'/>
    </disk>
    <disk type='network' device='disk'>
      <driver name='qemu' type='raw'/>
      <source protocol='rbd' name='pool/other'/>
      <target dev='vdf' bus='virtio'/>
    </disk>
    <disk type='network' device='disk'>
      <driver name='qemu' type='raw'/>
      <source protocol='rbd' name='pool/byusage'>
        <host name='mon1.invalid'/>
        <auth username='libvirt'><secret type='ceph' usage='%s'/></auth>
      </source>
      <target dev='vdg' bus='virtio'/>
    </disk>
    <disk type='file' device='disk'>
      <driver name='qemu' type='qcow2'/>
      <source file='%s'/>
      <target dev='sda' bus='scsi'/>
      <address type='drive' controller='0' bus='0' target='0' unit='3'/>
    </disk>
    <controller type='scsi' index='0' model='virtio-scsi'/>
    <disk type='file' device='cdrom'>
      <driver name='qemu' type='raw'/>
      <target dev='hdc' bus='ide'/>
      <readonly/>
    </disk>
    <disk type='file' device='cdrom'>
      <driver name='qemu' type='raw'/>
      <source file='/var/tmp/tfacc25-missing.iso' startupPolicy='optional'/>
      <target dev='hdd' bus='ide'/>
      <readonly/>
    </disk>
    <disk type='file' device='floppy'>
      <driver name='qemu' type='raw'/>
      <target dev='fda' bus='fdc'/>
    </disk>
  </devices>
</domain>`, acctest.DefaultDomainType(), name, root, acctest.Pool(), vol, usage, data))
	acctest.RemoveDomainAtEnd(t, name)

	generated := generateConfigPlansClean(t, "libvirt_domain.adopted", name)
	for _, want := range []string{`type=\"volume\"`, `socket=\"/run/tfacc25-nbd.sock\"`, `protocol=\"gluster\"`, `<config file=`,
		`unit=\"3\"`, `device=\"floppy\"`, `startupPolicy=\"optional\"`, `ABCDEFGHIJ0123456789K`, `"unmap"`,
		`"pool/other"`, secretID, usage} {
		if !strings.Contains(generated, want) {
			t.Errorf("the generated configuration has no %s:\n%s", want, generated)
		}
	}

	adoptUpdatesAndRecreates(t, name, generated, func() []string { return diskShape(t, name) })
}

// diskShape is every disk of the domain's persistent definition as libvirt prints it,
// less what libvirt assigns anew (a PCI address, an alias), sorted.
func diskShape(t *testing.T, name string) []string {
	t.Helper()
	live, err := acctest.InspectDomain(t, name)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, x := range live.Inactive.Devices.Disks {
		if x.Address != nil && x.Address.PCI != nil {
			x.Address = nil
		}
		x.Alias = nil
		text, err := x.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.Join(strings.Fields(text), " "))
	}
	slices.Sort(out)
	return out
}
