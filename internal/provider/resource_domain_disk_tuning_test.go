package provider_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// iotune on a running domain: set at create, changed and removed live (the same QEMU
// process, `virsh blkdeviotune` shows the new limits, the persistent definition has them
// too), each second plan empty.
func TestAccDomainDiskTuning_iotuneLive(t *testing.T) {
	acctest.RequireAcc(t)
	name, disk := acctest.DomainDisk(t, "dom")
	config := func(iotune string) string {
		return acctest.ProviderBlock("") + fmt.Sprintf(`
resource "libvirt_domain" "test" {
  name       = %q
  vcpu       = 1
  memory_mib = 128
  qemu_agent = false
  shutdown   = { timeout = "0s" } # nothing in the guest to wait for
  disk {
    volume_id = %q
    %s
  }
}
`, name, disk, iotune)
	}
	var firstID int32
	// limits checks what QEMU applies now (want: the non-zero limits) and what the
	// persistent definition says, on the domain first seen.
	limits := func(group string, want map[string]uint64) resource.TestCheckFunc {
		return acctest.HostCheck(func() error {
			live, err := acctest.SameRunningDomain(t, name, &firstID)
			if err != nil {
				return err
			}
			got, err := acctest.GetBlockIOTune(t, name, "vda")
			if err != nil {
				return err
			}
			for k, v := range got.Limits {
				if strings.HasSuffix(k, "_length") {
					continue // QEMU's burst lengths
				}
				if v != want[k] {
					return fmt.Errorf("blkdeviotune %s = %d, want %d (all: %v)", k, v, want[k], got.Limits)
				}
			}
			// Without a group QEMU names one after the device (/machine/peripheral/...).
			if group != "" && got.Group != group {
				return fmt.Errorf("blkdeviotune group_name %q, want %q (live XML %+v)", got.Group, group, live.Live.Devices.Disks[0].IOTune)
			}
			persistent := live.Inactive.Devices.Disks[0].IOTune
			if (persistent == nil) != (want == nil) || persistent != nil && persistent.TotalIopsSec != want["total_iops_sec"] {
				return fmt.Errorf("persistent iotune %+v, want %v", persistent, want)
			}
			return nil
		})
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{
				Config:            config(`iotune = { total_bytes_sec = 10485760, total_iops_sec = 200, total_iops_sec_max = 400, size_iops_sec = 4096 }`),
				ConfigPlanChecks:  acctest.Plans(),
				ConfigStateChecks: acctest.State(domRes, "state", "running", "disk.0.iotune.total_iops_sec", 200, "disk.0.iotune.size_iops_sec", 4096, "disk.0.read_only", nil),
				Check:             limits("", map[string]uint64{"total_bytes_sec": 10485760, "total_iops_sec": 200, "total_iops_sec_max": 400, "size_iops_sec": 4096}),
			},
			{
				Config:            config(`iotune = { read_bytes_sec = 5242880, write_iops_sec = 50, group_name = "tfacc" }`),
				ConfigPlanChecks:  acctest.Updates(domRes, "live"),
				ConfigStateChecks: acctest.State(domRes, "update_method", "live", "disk.0.iotune.total_iops_sec", nil, "disk.0.iotune.group_name", "tfacc"),
				Check:             limits("tfacc", map[string]uint64{"read_bytes_sec": 5242880, "write_iops_sec": 50}),
			},
			{
				Config:            config(""),
				ConfigPlanChecks:  acctest.Updates(domRes, "live"),
				ConfigStateChecks: acctest.State(domRes, "disk.0.iotune", nil),
				Check:             limits("", nil),
			},
		},
	})
}

// diskTuningXML is a stopped domain with every tuning field but iotune and iothread
// (libvirt needs <iothreads> for that, which libvirt_domain does not write yet): a tuned
// virtio disk, a scsi disk with wwn and serial (read-only; a serial longer than 20 with a
// space and detect_zeroes unmap without discard unmap, which libvirt accepts, #25), and a SCSI passthrough lun. A
// loop device is not SCSI, so the lun names a device this host lacks: define does not
// look, a start would fail.
func diskTuningXML(name, vda, sda string) string {
	return fmt.Sprintf(`<domain type='qemu'>
  <name>%s</name>
  <memory unit='MiB'>128</memory>
  <vcpu>1</vcpu>
  <iothreads>2</iothreads>
  <os><type arch='x86_64'>hvm</type><boot dev='hd'/></os>
  <features><acpi/><apic/></features>
  <devices>
    <disk type='file' device='disk'>
      <driver name='qemu' type='qcow2' cache='none' io='native' discard='unmap' detect_zeroes='unmap' queues='2' iothread='2'/>
      <source file='%s'/>
      <target dev='vda' bus='virtio'/>
      <serial>tfacc-vda.1</serial>
      <iotune><total_iops_sec>300</total_iops_sec><size_iops_sec>8192</size_iops_sec></iotune>
    </disk>
    <disk type='file' device='disk'>
      <driver name='qemu' type='qcow2' cache='writethrough' discard='ignore' detect_zeroes='unmap'/>
      <source file='%s'/>
      <target dev='sda' bus='scsi'/>
      <readonly/>
      <serial>tfacc sda serial longer than 20</serial>
      <wwn>5000C50015EA71AD</wwn>
    </disk>
    <disk type='block' device='lun' sgio='filtered'>
      <driver name='qemu' type='raw' cache='none'/>
      <source dev='/dev/sdz'/>
      <target dev='sdb' bus='scsi'/>
      <shareable/>
    </disk>
    <serial type='pty'/>
    <console type='pty'/>
    <graphics type='vnc' autoport='yes' listen='127.0.0.1'/>
  </devices>
</domain>`, name, vda, sda)
}

// diskTuningHCL is the configuration of diskTuningXML's domain; wwn in lower case (it
// compares without case).
func diskTuningHCL(name, vda, sda, vdaCache string) string {
	return acctest.ProviderBlock("") + fmt.Sprintf(`
resource "libvirt_domain" "test" {
  name       = %q
  vcpu       = 1
  memory_mib = 128
  running    = false
  qemu_agent = false
  cpu        = { iothreads = 2 }
  disk {
    path          = %q
    cache         = %q
    iothread      = 2
    io            = "native"
    discard       = "unmap"
    detect_zeroes = "unmap"
    queues        = 2
    serial        = "tfacc-vda.1"
    iotune        = { total_iops_sec = 300, size_iops_sec = 8192 }
  }
  disk {
    path      = %q
    bus       = "scsi"
    target    = "sda"
    cache         = "writethrough"
    read_only     = true
    discard       = "ignore"
    detect_zeroes = "unmap"
    serial        = "tfacc sda serial longer than 20"
    wwn           = "5000c50015ea71ad"
  }
  disk {
    path      = "/dev/sdz"
    device    = "lun"
    target    = "sdb"
    cache     = "none"
    sgio      = "filtered"
    shareable = true
  }
}
`, name, vda, vdaCache, sda)
}

// The tuning fields on a stopped domain: created by Terraform (a virtio-scsi controller
// added for the scsi disks, kept with its index when the definition is rewritten), plans
// clean, imports, and a change rewrites the definition only.
func TestAccDomainDiskTuning_defineOnly(t *testing.T) {
	acctest.RequireAcc(t)
	name, vda := acctest.DomainDisk(t, "dom")
	sda := acctest.Overlay(t, name+"-b.qcow2")
	scsiController := func(want string) resource.TestCheckFunc {
		return acctest.HostCheck(func() error {
			live, err := acctest.InspectDomain(t, name)
			if err != nil {
				return err
			}
			var scsi []libvirtxml.DomainController
			for _, c := range live.Inactive.Devices.Controllers {
				if c.Type == "scsi" {
					scsi = append(scsi, c)
				}
			}
			if len(scsi) != 1 || scsi[0].Model != want || scsi[0].Index == nil || *scsi[0].Index != 0 {
				return fmt.Errorf("scsi controllers %+v, want one %s with index 0", scsi, want)
			}
			d := live.Inactive.Devices.Disks
			if live.Inactive.IOThreads != 2 {
				return fmt.Errorf("iothreads %d, want 2", live.Inactive.IOThreads)
			}
			if len(d) != 3 || d[0].Driver.Cache == "" || d[0].Driver.IOThread == nil || *d[0].Driver.IOThread != 2 || d[2].Device != "lun" || d[2].SGIO != "filtered" || d[2].Shareable == nil ||
				d[1].ReadOnly == nil || !strings.EqualFold(d[1].WWN, "5000c50015ea71ad") {
				return fmt.Errorf("disks as defined: %+v", d)
			}
			return nil
		})
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{
				Config:           diskTuningHCL(name, vda, sda, "none"),
				ConfigPlanChecks: acctest.Plans(),
				ConfigStateChecks: acctest.State(domRes, "state", "shutoff", "disk.0.cache", "none", "disk.0.read_only", nil, "cpu.iothreads", 2, "disk.0.iothread", 2,
					"disk.1.read_only", true, "disk.1.wwn", "5000c50015ea71ad", "disk.1.serial", "tfacc sda serial longer than 20", "disk.1.detect_zeroes", "unmap", "disk.2.device", "lun", "disk.2.bus", "scsi"),
				Check: scsiController("virtio-scsi"),
			},
			{
				ResourceName:            domRes,
				ImportState:             true,
				ImportStateVerify:       true,
				ImportStateId:           name,
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
			{
				Config:            diskTuningHCL(name, vda, sda, "directsync"),
				ConfigPlanChecks:  acctest.Updates(domRes, "definition"),
				ConfigStateChecks: acctest.State(domRes, "disk.0.cache", "directsync", "state", "shutoff"),
				Check:             scsiController("virtio-scsi"),
			},
		},
	})
}

// A domain defined with the tuning fields by virsh (wwn in upper case, libvirt's lsi
// controller for its scsi disks) imports by name and plans clean against its
// configuration; a rewrite keeps libvirt's controller. The provider would give SCSI
// disks a virtio-scsi controller, so import writes the lsi one into device_xml (#25), and
// the configuration says it.
func TestAccDomainDiskTuning_importDefined(t *testing.T) {
	acctest.RequireAcc(t)
	name, vda := acctest.DomainDisk(t, "dom")
	sda := acctest.Overlay(t, name+"-b.qcow2")
	acctest.DefineDomain(t, diskTuningXML(name, vda, sda))
	acctest.RemoveDomainAtEnd(t, name) // should a step fail before Terraform tracks it
	// What -generate-config-out writes for it plans clean too.
	if generated := generateConfigPlansClean(t, domRes, name); !strings.Contains(generated, "iotune") {
		t.Errorf("the generated configuration lacks the disk's iotune:\n%s", generated)
	}
	withLSI := func(config string) string {
		return strings.Replace(config, "  running    = false\n",
			"  running    = false\n  device_xml = [\"<controller type=\\\"scsi\\\" index=\\\"0\\\" model=\\\"lsilogic\\\"></controller>\"]\n", 1)
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{
				Config:             withLSI(diskTuningHCL(name, vda, sda, "none")),
				ResourceName:       domRes,
				ImportState:        true,
				ImportStateId:      name,
				ImportStatePersist: true,
			},
			{
				Config:           withLSI(diskTuningHCL(name, vda, sda, "none")),
				ConfigPlanChecks: acctest.Plans(acctest.NoChange()),
			},
			{
				Config:           withLSI(diskTuningHCL(name, vda, sda, "directsync")),
				ConfigPlanChecks: acctest.Updates(domRes, "definition"),
				Check: acctest.HostCheck(func() error {
					live, err := acctest.InspectDomain(t, name)
					if err != nil {
						return err
					}
					for _, c := range live.Inactive.Devices.Controllers {
						if c.Type == "scsi" && c.Model != "virtio-scsi" {
							return nil // libvirt's own controller, kept
						}
					}
					return fmt.Errorf("controllers %+v: libvirt's scsi controller was replaced", live.Inactive.Devices.Controllers)
				}),
			},
		},
	})
}
