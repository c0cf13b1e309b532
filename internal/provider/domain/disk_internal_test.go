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

// An import keeps a secret named by usage (secret_usage); a state without secret_usage
// keeps none (the next write names the secret by UUID, as before the attribute).
func TestDiskNetworkFromSpec_secretUsage(t *testing.T) {
	n := &domainxml.NetworkSource{Protocol: domainxml.ProtocolRBD, Name: "p/i",
		Auth: &domainxml.DiskAuth{Username: "libvirt", SecretID: "0b8e7f2c-1d3a-4b5c-9e6f-7a8b9c0d1e2f", SecretUsage: "client.libvirt secret"}}
	if m := diskNetworkFromSpec(n, nil); m.Auth.SecretUsage.ValueString() != "client.libvirt secret" || m.Auth.SecretID.ValueString() == "" {
		t.Errorf("import: %+v", m.Auth)
	}
	prior := &diskNetworkModel{Auth: &diskAuthModel{Username: types.StringValue("libvirt"),
		SecretID: types.StringValue("0b8e7f2c-1d3a-4b5c-9e6f-7a8b9c0d1e2f"), SecretUsage: types.StringNull()}}
	if m := diskNetworkFromSpec(n, prior); !m.Auth.SecretUsage.IsNull() {
		t.Errorf("a state without secret_usage reads %v", m.Auth.SecretUsage)
	}
	if s := (&diskNetworkModel{Protocol: types.StringValue("rbd"), Name: types.StringValue("p/i"), Auth: &diskAuthModel{Username: types.StringValue("u"),
		SecretID: types.StringValue("x"), SecretUsage: types.StringValue("client.u")}}).toSpec(); s.Auth.SecretUsage != "client.u" {
		t.Errorf("toSpec %+v", s.Auth)
	}
}
