package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// configure runs the provider's Configure with the given attribute values (others null).
func configure(t *testing.T, vals map[string]tftypes.Value, ssh map[string]tftypes.Value) *provider.ConfigureResponse {
	t.Helper()
	ctx := context.Background()
	p := New("test")()
	var sresp provider.SchemaResponse
	p.Schema(ctx, provider.SchemaRequest{}, &sresp)
	typ := sresp.Schema.Type().TerraformType(ctx).(tftypes.Object)

	obj := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		obj[name] = tftypes.NewValue(at, nil)
	}
	for k, v := range vals {
		obj[k] = v
	}
	if ssh != nil {
		st := typ.AttributeTypes["ssh"].(tftypes.Object)
		sv := map[string]tftypes.Value{}
		for name, at := range st.AttributeTypes {
			sv[name] = tftypes.NewValue(at, nil)
		}
		for k, v := range ssh {
			sv[k] = v
		}
		obj["ssh"] = tftypes.NewValue(st, sv)
	}
	resp := &provider.ConfigureResponse{}
	p.Configure(ctx, provider.ConfigureRequest{Config: tfsdk.Config{Schema: sresp.Schema, Raw: tftypes.NewValue(typ, obj)}}, resp)
	return resp
}

func TestConfigure_insecureSSHWarns(t *testing.T) {
	resp := configure(t,
		map[string]tftypes.Value{"uri": tftypes.NewValue(tftypes.String, "qemu+ssh://root@192.0.2.10/system")},
		map[string]tftypes.Value{
			"password":                            tftypes.NewValue(tftypes.String, "s3cret"),
			"insecure_skip_host_key_verification": tftypes.NewValue(tftypes.Bool, true),
		})
	if resp.Diagnostics.HasError() {
		t.Fatalf("errors: %v", resp.Diagnostics)
	}
	if resp.Diagnostics.WarningsCount() != 1 {
		t.Fatalf("want one warning, got %v", resp.Diagnostics)
	}
	w := resp.Diagnostics.Warnings()[0]
	if !strings.Contains(w.Detail(), "192.0.2.10:22") || !strings.Contains(w.Detail(), "verification is disabled") {
		t.Errorf("warning %q", w.Detail())
	}
	if strings.Contains(w.Detail(), "s3cret") {
		t.Error("warning leaks the password")
	}
	if _, ok := resp.ResourceData.(*tfkit.Hosts); !ok {
		t.Errorf("ResourceData is %T", resp.ResourceData)
	}
}

func TestConfigure_envFallbacks(t *testing.T) {
	t.Setenv("LIBVIRT_DEFAULT_URI", "test:///default")
	t.Setenv("LIBVIRT_MAX_CONNECTIONS", "7")
	resp := configure(t, nil, nil)
	if resp.Diagnostics.HasError() {
		t.Fatalf("errors: %v", resp.Diagnostics)
	}
	c := defaultClient(t, resp.ResourceData)
	if c.URI().String() != "test:///default" {
		t.Errorf("uri = %s", c.URI())
	}

	t.Setenv("LIBVIRT_MAX_CONNECTIONS", "lots")
	resp = configure(t, nil, nil)
	if !resp.Diagnostics.HasError() || !strings.Contains(resp.Diagnostics.Errors()[0].Detail(), "LIBVIRT_MAX_CONNECTIONS") {
		t.Errorf("bad LIBVIRT_MAX_CONNECTIONS: %v", resp.Diagnostics)
	}
}

func TestConfigure_defaultURI(t *testing.T) {
	t.Setenv("LIBVIRT_DEFAULT_URI", "")
	resp := configure(t, nil, nil)
	if resp.Diagnostics.HasError() {
		t.Fatalf("errors: %v", resp.Diagnostics)
	}
	if got := defaultClient(t, resp.ResourceData).URI().String(); got != "qemu:///system" {
		t.Errorf("default uri = %s", got)
	}
}

func TestConfigure_sshKeyFileMissing(t *testing.T) {
	resp := configure(t,
		map[string]tftypes.Value{"uri": tftypes.NewValue(tftypes.String, "qemu+ssh://root@192.0.2.10/system")},
		map[string]tftypes.Value{"private_key_file": tftypes.NewValue(tftypes.String, "/nonexistent/id_ed25519")})
	if !resp.Diagnostics.HasError() || !strings.Contains(resp.Diagnostics.Errors()[0].Detail(), "/nonexistent/id_ed25519") {
		t.Errorf("want an error naming the key file, got %v", resp.Diagnostics)
	}
}

// defaultClient is the default host's client of a configured provider's data.
func defaultClient(t *testing.T, data any) *libvirt.Client {
	t.Helper()
	c, err := data.(*tfkit.Hosts).Client(tfkit.DefaultHost)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
