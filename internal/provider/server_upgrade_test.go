package provider

import (
	"bytes"
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// The shortcut's upgrade is the framework's, byte for byte, for every resource type: with
// an attribute the schema does not have (dropped), null and missing blocks (empty lists),
// values kept.
func TestUpgradeCurrentMatchesFramework(t *testing.T) {
	ctx := context.Background()
	framework := providerserver.NewProtocol6(New("test")())()
	schemas := &schemaDefaults{newRes: func() []func() resource.Resource { return New("test")().Resources(ctx) }}
	fast := shortcutServer{ProviderServer: framework, schemas: schemas}
	states := map[string]string{
		"libvirt_domain": `{"id":"6f1c","name":"vm","vcpu":2,"running":true,"disk":null,"network_interface":[{"network":"default","mac":"52:54:00:00:00:01"}],"gone_attribute":"x"}`,
	}
	for _, f := range New("test")().Resources(ctx) {
		var md resource.MetadataResponse
		f().Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "libvirt"}, &md)
		state, ok := states[md.TypeName]
		if !ok {
			state = `{"id":"x","gone_attribute":1}`
		}
		var sr resource.SchemaResponse
		f().Schema(ctx, resource.SchemaRequest{}, &sr)
		req := &tfprotov6.UpgradeResourceStateRequest{TypeName: md.TypeName, Version: sr.Schema.Version, RawState: &tfprotov6.RawState{JSON: []byte(state)}}
		want, err := framework.UpgradeResourceState(ctx, req)
		if err != nil || len(want.Diagnostics) > 0 {
			t.Fatalf("%s: framework: %v %v", md.TypeName, err, want.Diagnostics)
		}
		got, ok := schemas.upgradeCurrent(ctx, req)
		if !ok {
			t.Fatalf("%s: the shortcut did not answer", md.TypeName)
		}
		if !bytes.Equal(got.UpgradedState.MsgPack, want.UpgradedState.MsgPack) {
			t.Errorf("%s: the shortcut's upgraded state differs from the framework's", md.TypeName)
		}
		if resp, err := fast.UpgradeResourceState(ctx, req); err != nil || !bytes.Equal(resp.UpgradedState.MsgPack, want.UpgradedState.MsgPack) {
			t.Errorf("%s: the server's answer differs: %v", md.TypeName, err)
		}
	}
}

// Another version, a flatmap state or a type it does not know go to the framework.
func TestUpgradeCurrentLeavesTheRest(t *testing.T) {
	ctx := context.Background()
	schemas := &schemaDefaults{newRes: func() []func() resource.Resource { return New("test")().Resources(ctx) }}
	for name, req := range map[string]*tfprotov6.UpgradeResourceStateRequest{
		"older version": {TypeName: "libvirt_domain", Version: 0, RawState: &tfprotov6.RawState{JSON: []byte(`{"name":"vm"}`)}},
		"flatmap":       {TypeName: "libvirt_domain", RawState: &tfprotov6.RawState{Flatmap: map[string]string{"name": "vm"}}},
		"unknown type":  {TypeName: "libvirt_nothing", RawState: &tfprotov6.RawState{JSON: []byte(`{}`)}},
		"wrong shape":   {TypeName: "libvirt_domain", RawState: &tfprotov6.RawState{JSON: []byte(`{"vcpu":"many"}`)}},
	} {
		if _, ok := schemas.upgradeCurrent(ctx, req); ok {
			t.Errorf("%s: answered by the shortcut", name)
		}
	}
}
