package domain

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

func TestDiskEncryption(t *testing.T) {
	const id = "6b1c3a5e-0d4f-4c2a-9e1b-1234567890ab"
	if diskEncryption(&libvirt.VolumeEncryption{Format: "luks"}) != nil {
		t.Error("a disk gets an encryption without a secret")
	}
	if e := diskEncryption(&libvirt.VolumeEncryption{Format: "luks", Secret: id}); *e != (domainxml.DiskEncryption{Format: "luks", Secret: id}) {
		t.Errorf("disk encryption %+v", e)
	}
}

// A disk in device_xml (one the disk blocks cannot say, as import writes it) holds its
// target: the plan gives a disk block without one the next free name, as Build does.
func TestPlanDiskDefaults_besideDeviceXMLDisk(t *testing.T) {
	plan := &Model{}
	plan.Disks = []diskModel{{Device: types.StringValue(domainxml.DeviceDisk), Bus: types.StringUnknown(), Target: types.StringUnknown(),
		Format: types.StringValue("raw")}}
	plan.DeviceXML = types.ListValueMust(types.StringType, []attr.Value{types.StringValue(
		`<disk type="nvme" device="disk"><driver name="qemu" type="raw"/><source type="pci" managed="yes" namespace="1">` +
			`<address domain="0x0000" bus="0x01" slot="0x00" function="0x0"/></source><target dev="vda" bus="virtio"/></disk>`)})
	planDiskDefaults(plan, nil)
	if got := plan.Disks[0].Target.ValueString(); got != "vdb" {
		t.Errorf("target %q, want vdb (vda is the device_xml disk's)", got)
	}
}
