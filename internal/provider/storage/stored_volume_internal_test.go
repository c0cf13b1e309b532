package storage

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/cloudinit"
)

// The blobs' content: what blobResource.Create stores.
func TestBlobContent(t *testing.T) {
	plan := &IgnitionModel{Content: types.StringValue(`{"a":1}`)}
	if b, _ := plan.content(&IgnitionModel{}); string(b) != `{"a":1}` {
		t.Errorf("content: %q", b)
	}
	plan = &IgnitionModel{Content: types.StringNull()}
	if b, _ := plan.content(&IgnitionModel{ContentWO: types.StringValue(`{"wo":1}`)}); string(b) != `{"wo":1}` {
		t.Errorf("content_wo: %q", b)
	}

	seed := &CloudinitISOModel{UserData: types.StringValue("#cloud-config\n"), MetaData: types.StringUnknown(),
		InstanceID: types.StringValue("web-1"), Hostname: types.StringValue("web")}
	config := &CloudinitISOModel{UserDataWO: types.StringNull(), MetaData: types.StringNull(),
		InstanceID: types.StringValue("web-1"), Hostname: types.StringValue("web")}
	img, err := seed.content(config)
	if err != nil {
		t.Fatal(err)
	}
	_, files, err := cloudinit.ReadISO(img)
	if err != nil || string(files[cloudinit.UserDataFile]) != "#cloud-config\n" {
		t.Fatalf("image files %v, %v", files, err)
	}
	if seed.MetaData.ValueString() != string(files[cloudinit.MetaDataFile]) || seed.InstanceID.ValueString() != "web-1" {
		t.Errorf("plan not completed from the meta-data written: %+v", seed)
	}
}
