package provider_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// TestAccDomainUpgrade_fromV2 is a user's upgrade from v2 to v3: two domains that v2 made
// (testdata/v2-upgrade: v2.tf.txt is the configuration, <name>.xml what libvirt held and
// <name>.json what v2 stored, both captured from a v2 apply), one using every v2 field the
// v3 groups take and one using almost none. Their state, at v2's schema version, meets the
// same configuration written with v3's names (v3.tf). The plan must be empty: every value
// moved to its group, what libvirt filled in for v2 (the machine expansion, qemu64, the
// default features) left out of state, and nothing on the host changed.
func TestAccDomainUpgrade_fromV2(t *testing.T) {
	acctest.RequireAcc(t)
	ctx := context.Background()
	c := acctest.Client(t)
	names := map[string]string{"every": acctest.RandomName("v2up"), "kernel": acctest.RandomName("v2up")}
	var instances []string
	for _, res := range []string{"every", "kernel"} {
		name, id := names[res], uuid.NewString()
		xml := strings.NewReplacer("@NAME@", name, "@UUID@", id).Replace(readTestdata(t, "v2-upgrade/"+res+".xml"))
		if _, err := c.DefineDomain(ctx, name, xml); err != nil {
			t.Fatalf("define %s from v2's XML: %v", res, err)
		}
		t.Cleanup(func() {
			if err := c.UndefineDomain(context.Background(), id); err != nil {
				t.Errorf("undefine %s: %v", name, err)
			}
		})
		attrs := strings.NewReplacer("@NAME@", name, "@UUID@", id).Replace(readTestdata(t, "v2-upgrade/"+res+".json"))
		instances = append(instances, fmt.Sprintf(`{"mode": "managed", "type": "libvirt_domain", "name": %q,
  "provider": "provider[\"registry.terraform.io/kvmforge/libvirt\"]",
  "instances": [{"schema_version": 0, "attributes": %s, "sensitive_attributes": []}]}`, res, attrs))
	}
	config := strings.NewReplacer("@EVERY@", names["every"], "@KERNEL@", names["kernel"]).Replace(readTestdata(t, "v2-upgrade/v3.tf.txt"))
	w := newCLIWork(t, acctest.ProviderBlock("")+config)
	w.write("terraform.tfstate", fmt.Sprintf(`{"version": 4, "terraform_version": "1.11.4", "serial": 1,
  "lineage": %q, "outputs": {}, "resources": [%s]}`, uuid.NewString(), strings.Join(instances, ",\n")))
	before := map[string]string{}
	for res, name := range names {
		before[res] = inactiveXML(t, c, name)
	}

	out, code := w.run("plan", "-detailed-exitcode", "-input=false")
	if code != 0 {
		t.Fatalf("the v3 configuration against the upgraded v2 state plans a change (exit %d):\n%s", code, out)
	}
	w.mustRun("apply", "-refresh-only", "-auto-approve", "-input=false")
	got := map[string]map[string]any{}
	for _, r := range w.state() {
		got[strings.TrimPrefix(r.Address, "libvirt_domain.")] = r.Values
	}
	for res, vals := range got {
		if vals["console_url"] != "" || vals["state"] != "shutoff" {
			t.Errorf("%s: console_url %v, state %v after the refresh, want \"\" and shutoff", res, vals["console_url"], vals["state"])
		}
	}
	// What v2 held from libvirt and v3 keeps out of state.
	for _, attr := range []string{"cpu", "events", "devices", "qemu", "features", "memory_backing"} {
		if v := got["kernel"][attr]; v != nil {
			t.Errorf("kernel domain: %s = %v after the upgrade, want null (v2 held only libvirt's values there)", attr, v)
		}
	}
	if os, _ := got["kernel"]["os"].(map[string]any); os == nil || os["kernel"] == nil || os["machine"] != nil || os["arch"] != "aarch64" || os["emulator"] != nil {
		t.Errorf("kernel domain: os = %v, want the arch and the kernel only (not libvirt's machine and emulator)", got["kernel"]["os"])
	}
	// What the configuration writes, in its group.
	wants := map[string]map[string]any{
		"os":      {"machine": "q35", "arch": nil, "boot": []any{"hd", "network"}},
		"cpu":     {"mode": "custom", "model": "qemu64", "iothreads": json.Number("2"), "emulator_pinning": "0-1"},
		"events":  {"on_crash": "preserve", "on_poweroff": "restart", "on_reboot": nil},
		"qemu":    {"env": map[string]any{"V2UP": "1"}},
		"devices": {"panic": map[string]any{"model": "isa"}},
	}
	for group, want := range wants {
		g, _ := got["every"][group].(map[string]any)
		for k, v := range want {
			if fmt.Sprint(g[k]) != fmt.Sprint(v) {
				t.Errorf("every domain: %s.%s = %v after the upgrade, want %v", group, k, g[k], v)
			}
		}
	}
	for res, name := range names {
		if after := inactiveXML(t, c, name); after != before[res] {
			t.Errorf("%s: the upgrade changed the domain's definition:\nbefore:\n%s\nafter:\n%s", res, before[res], after)
		}
	}
}

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// inactiveXML is the domain's persistent definition as libvirt prints it.
func inactiveXML(t *testing.T, c *libvirt.Client, name string) string {
	t.Helper()
	st, err := c.GetDomainStatus(context.Background(), name)
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return st.XML
}
