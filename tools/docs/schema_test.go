package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/zclconf/go-cty/cty"
)

func TestSchemaJSONDecodes(t *testing.T) {
	js, err := schemaJSON(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var all tfjson.ProviderSchemas
	if err := all.UnmarshalJSON(js); err != nil {
		t.Fatal(err)
	}
	ps := all.Schemas[providerName]
	if ps == nil || ps.ConfigSchema == nil || ps.ConfigSchema.Block == nil {
		t.Fatalf("no provider config schema under %q", providerName)
	}
	if _, ok := ps.ConfigSchema.Block.Attributes["uri"]; !ok {
		t.Errorf("provider schema has no uri attribute")
	}
	if _, ok := ps.DataSourceSchemas["libvirt_host"]; !ok {
		t.Errorf("no libvirt_host data source schema")
	}
	again, err := schemaJSON(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(js, again) {
		t.Errorf("schema JSON differs between two runs: docs would not be deterministic")
	}
}

// TestConverter covers what the provider may not use yet: nested attributes, nesting
// modes, block limits, functions, identities, optional object attributes.
func TestConverter(t *testing.T) {
	str := func(name string, mut func(*tfprotov6.SchemaAttribute)) *tfprotov6.SchemaAttribute {
		a := &tfprotov6.SchemaAttribute{Name: name, Type: tftypes.String, Optional: true}
		if mut != nil {
			mut(a)
		}
		return a
	}
	in := &tfprotov6.Schema{
		Version: 3,
		Block: &tfprotov6.SchemaBlock{
			Description:     "A `thing`.",
			DescriptionKind: tfprotov6.StringKindMarkdown,
			Attributes: []*tfprotov6.SchemaAttribute{
				str("secret", func(a *tfprotov6.SchemaAttribute) { a.Sensitive, a.WriteOnly = true, true }),
				str("old", func(a *tfprotov6.SchemaAttribute) { a.Deprecated = true }),
				{Name: "tags", Type: tftypes.Map{ElementType: tftypes.String}, Computed: true},
				{Name: "obj", Type: tftypes.Object{
					AttributeTypes:     map[string]tftypes.Type{"a": tftypes.Number, "b": tftypes.Bool},
					OptionalAttributes: map[string]struct{}{"b": {}},
				}, Required: true},
				{Name: "any", Type: tftypes.DynamicPseudoType, Optional: true},
				{Name: "disks", Required: true, NestedType: &tfprotov6.SchemaObject{
					Nesting:    tfprotov6.SchemaObjectNestingModeList,
					Attributes: []*tfprotov6.SchemaAttribute{str("path", nil)},
				}},
				{Name: "single", Optional: true, NestedType: &tfprotov6.SchemaObject{
					Nesting:    tfprotov6.SchemaObjectNestingModeSingle,
					Attributes: []*tfprotov6.SchemaAttribute{str("x", nil)},
				}},
			},
			BlockTypes: []*tfprotov6.SchemaNestedBlock{
				{TypeName: "nic", Nesting: tfprotov6.SchemaNestedBlockNestingModeList, MinItems: 1, MaxItems: 8,
					Block: &tfprotov6.SchemaBlock{Attributes: []*tfprotov6.SchemaAttribute{str("mac", nil)}}},
				{TypeName: "opts", Nesting: tfprotov6.SchemaNestedBlockNestingModeSet,
					Block: &tfprotov6.SchemaBlock{}},
			},
		},
	}
	var c converter
	got := c.schema(in)
	if len(c.errs) > 0 {
		t.Fatal(c.errs)
	}
	b := got.Block
	check := func(what string, ok bool) {
		t.Helper()
		if !ok {
			t.Errorf("%s: wrong", what)
		}
	}
	check("version", got.Version == 3)
	check("block description", b.Description == "A `thing`." && b.DescriptionKind == tfjson.SchemaDescriptionKindMarkdown)
	check("secret", b.Attributes["secret"].Sensitive && b.Attributes["secret"].WriteOnly && b.Attributes["secret"].AttributeType == cty.String)
	check("old", b.Attributes["old"].Deprecated && b.Attributes["old"].DescriptionKind == tfjson.SchemaDescriptionKindPlain)
	check("tags", b.Attributes["tags"].AttributeType.Equals(cty.Map(cty.String)) && b.Attributes["tags"].Computed)
	check("obj", b.Attributes["obj"].AttributeType.Equals(cty.ObjectWithOptionalAttrs(
		map[string]cty.Type{"a": cty.Number, "b": cty.Bool}, []string{"b"})))
	check("any", b.Attributes["any"].AttributeType == cty.DynamicPseudoType)
	disks := b.Attributes["disks"]
	check("disks", disks.AttributeType == cty.NilType && disks.AttributeNestedType != nil &&
		disks.AttributeNestedType.NestingMode == tfjson.SchemaNestingModeList &&
		disks.AttributeNestedType.Attributes["path"].AttributeType == cty.String)
	check("single", b.Attributes["single"].AttributeNestedType.NestingMode == tfjson.SchemaNestingModeSingle)
	nic := b.NestedBlocks["nic"]
	check("nic", nic.NestingMode == tfjson.SchemaNestingModeList && nic.MinItems == 1 && nic.MaxItems == 8 &&
		nic.Block.Attributes["mac"] != nil)
	check("opts", b.NestedBlocks["opts"].NestingMode == tfjson.SchemaNestingModeSet)

	fn := c.function("f", &tfprotov6.Function{
		Summary:           "s",
		Description:       "d",
		Parameters:        []*tfprotov6.FunctionParameter{{Name: "n", Type: tftypes.String, AllowNullValue: true}},
		VariadicParameter: &tfprotov6.FunctionParameter{Name: "rest", Type: tftypes.List{ElementType: tftypes.Number}},
		Return:            &tfprotov6.FunctionReturn{Type: tftypes.String},
	})
	check("function", fn.Summary == "s" && fn.Description == "d" && fn.ReturnType == cty.String &&
		len(fn.Parameters) == 1 && fn.Parameters[0].IsNullable && fn.Parameters[0].Type == cty.String &&
		fn.VariadicParameter.Type.Equals(cty.List(cty.Number)))

	id := c.identity("r", &tfprotov6.ResourceIdentitySchema{Version: 1, IdentityAttributes: []*tfprotov6.ResourceIdentitySchemaAttribute{
		{Name: "name", Type: tftypes.String, RequiredForImport: true},
	}})
	check("identity", id.Version == 1 && id.Attributes["name"].RequiredForImport && id.Attributes["name"].IdentityType == cty.String)

	// Everything must survive tfjson's own encoding and decoding.
	ps := &tfjson.ProviderSchemas{FormatVersion: "1.0", Schemas: map[string]*tfjson.ProviderSchema{"x": {
		ResourceSchemas: map[string]*tfjson.Schema{"x_thing": got},
		Functions:       map[string]*tfjson.FunctionSignature{"f": fn},
	}}}
	js, err := json.Marshal(ps)
	if err != nil {
		t.Fatal(err)
	}
	var back tfjson.ProviderSchemas
	if err := back.UnmarshalJSON(js); err != nil {
		t.Fatalf("%v\n%s", err, js)
	}
	if len(c.errs) > 0 {
		t.Fatal(c.errs)
	}
}

// terraformCLI is a Terraform (or OpenTofu) binary to check against, or "" to skip.
func terraformCLI(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the provider and runs Terraform: skipped with -short")
	}
	for _, name := range []string{"terraform", "tofu"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("neither terraform nor tofu is on PATH")
	return ""
}

var (
	devOnce sync.Once
	devDir  string // holds the build and devRC; removed by TestMain
	devRC   string // CLI config with dev_overrides pointing at a fresh provider build
	devErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if devDir != "" {
		os.RemoveAll(devDir)
	}
	os.Exit(code)
}

// devOverride builds the provider once and returns a CLI config file whose
// dev_overrides make Terraform use that build: no init, no registry, no network.
func devOverride(t *testing.T) string {
	t.Helper()
	devOnce.Do(func() {
		root, err := moduleRoot("")
		if err != nil {
			devErr = err
			return
		}
		// Shared by every test through devOnce, so not t.TempDir (removed when the first
		// test ends); TestMain removes it.
		dir, err := os.MkdirTemp("", "libvirt-docs-test-") //nolint:usetesting // outlives the test that creates it, see above
		if err != nil {
			devErr = err
			return
		}
		devDir = dir
		bin := filepath.Join(dir, "bin")
		build := exec.Command("go", "build", "-o", filepath.Join(bin, "terraform-provider-libvirt"), ".")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			devErr = err
			devRC = string(out)
			return
		}
		devRC = filepath.Join(dir, "cli.tfrc")
		devErr = os.WriteFile(devRC, []byte(`provider_installation {
  dev_overrides {
    "registry.terraform.io/kvmforge/libvirt" = "`+bin+`"
  }
  direct {}
}
`), 0o644)
	})
	if devErr != nil {
		t.Fatalf("build the provider for dev_overrides: %v\n%s", devErr, devRC)
	}
	return devRC
}

// terraform runs the CLI in dir with the dev override and nothing of the caller's own
// Terraform setup (plugin cache, credentials, other CLI config).
func terraform(t *testing.T, bin, rc, dir string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TF_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "TF_CLI_CONFIG_FILE="+rc, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1")
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

const requiredProviders = `terraform {
  required_providers {
    libvirt = {
      source = "kvmforge/libvirt"
    }
  }
}
`

// TestSchemaMatchesTerraform checks the in-process schema against what
// `terraform providers schema -json` prints for a real build of the provider.
func TestSchemaMatchesTerraform(t *testing.T) {
	bin := terraformCLI(t)
	rc := devOverride(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(requiredProviders), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := terraform(t, bin, rc, dir, "providers", "schema", "-json")
	if err != nil {
		t.Fatalf("providers schema -json: %v\n%s", err, errOut)
	}
	var fromCLI map[string]any
	if err := json.Unmarshal([]byte(out), &fromCLI); err != nil {
		t.Fatal(err)
	}
	schemas, _ := fromCLI["provider_schemas"].(map[string]any)
	want := schemas["registry.terraform.io/kvmforge/libvirt"]
	if want == nil {
		t.Fatalf("no registry.terraform.io/kvmforge/libvirt in the CLI's schema: %.500s", out)
	}

	js, err := schemaJSON(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ours map[string]any
	if err := json.Unmarshal(js, &ours); err != nil {
		t.Fatal(err)
	}
	got := ours["provider_schemas"].(map[string]any)[providerName]

	// Newer CLIs know more schema kinds than older ones: compare the kinds the CLI printed.
	gotM, wantM := got.(map[string]any), want.(map[string]any)
	for k := range gotM {
		if _, ok := wantM[k]; !ok {
			t.Logf("the CLI does not print %q; not compared", k)
			delete(gotM, k)
		}
	}
	a, _ := json.MarshalIndent(wantM, "", "  ")
	b, _ := json.MarshalIndent(gotM, "", "  ")
	if !bytes.Equal(a, b) {
		t.Errorf("in-process schema differs from `%s providers schema -json`:\n%s", filepath.Base(bin), lineDiff(string(a), string(b)))
	}
}

// TestExamplesValidate runs `terraform validate` on every example file on its own, against
// the provider's real schema: attribute names, types and references must be right.
func TestExamplesValidate(t *testing.T) {
	bin := terraformCLI(t)
	rc := devOverride(t)
	root, err := moduleRoot("")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	err = filepath.WalkDir(filepath.Join(root, "examples"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".tf") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no examples found")
	}
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		t.Run(rel, func(t *testing.T) {
			t.Parallel()
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "example.tf"), src, 0o644); err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(src, []byte("required_providers")) {
				if err := os.WriteFile(filepath.Join(dir, "zz_required_providers.tf"), []byte(requiredProviders), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			out, errOut, err := terraform(t, bin, rc, dir, "validate", "-no-color")
			if err != nil {
				t.Errorf("terraform validate %s: %v\n%s%s", rel, err, out, errOut)
			}
		})
	}
}

// TestTemplateSnippetsFormatted checks the ```terraform blocks written inline in
// templates/ (examples/ files are checked by TestExamplesValidate and `terraform fmt`).
func TestTemplateSnippetsFormatted(t *testing.T) {
	bin := terraformCLI(t)
	root, err := moduleRoot("")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	n := 0
	err = filepath.WalkDir(filepath.Join(root, "templates"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		var block []string
		in, start := false, 0
		for i, line := range strings.Split(string(src), "\n") {
			switch {
			case !in && strings.TrimSpace(line) == "```terraform":
				in, start, block = true, i+1, nil
			case in && strings.TrimSpace(line) == "```":
				in = false
				n++
				name := fmt.Sprintf("%03d_%s_line%d.tf", n, strings.NewReplacer("/", "_", ".", "_").Replace(rel), start+1)
				if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(block, "\n")+"\n"), 0o644); err != nil {
					return err
				}
			case in:
				block = append(block, line)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		// templates/ has terraform snippets (the guides are full of them): finding none means
		// the extraction above broke, not that there is nothing to check.
		t.Fatal("no terraform snippets found in templates/: the snippet extraction is broken")
	}
	cmd := exec.Command(bin, "fmt", "-check", "-diff", "-no-color", dir)
	cmd.Env = append(os.Environ(), "CHECKPOINT_DISABLE=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("terraform snippets in templates/ are not valid, formatted HCL (file names say template and line): %v\n%s", err, out)
	}
}

// lineDiff shows the first lines where two texts differ, with some context.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	from := max(i-5, 0)
	var sb strings.Builder
	for j := from; j < i+10; j++ {
		if j < len(w) {
			sb.WriteString("- " + w[j] + "\n")
		}
	}
	for j := from; j < i+10; j++ {
		if j < len(g) {
			sb.WriteString("+ " + g[j] + "\n")
		}
	}
	return sb.String()
}
