// Command docs regenerates the registry documentation in docs/ from templates/, examples/
// and the provider's schema, without network access and without a Terraform binary.
//
// tfplugindocs normally compiles the provider, installs (or downloads) Terraform and runs
// `terraform providers schema -json`. Instead, this command asks the provider for its
// schema in-process over the protocol 6 calls Terraform itself makes, writes it in the
// `providers schema -json` format to a temporary file, and hands that file to
// `tfplugindocs generate --providers-schema`. tfplugindocs is a Go tool of this module
// (the `tool` directive in go.mod), so `go tool` runs the pinned, cached version.
//
// Run from anywhere inside the module:
//
//	go generate ./...        (main.go: //go:generate go run ./tools/docs)
//	go run ./tools/docs      (the same)
//	go run ./tools/docs -check                    (only report whether docs/ is up to date)
//	go run ./tools/docs -schema-out schema.json   (also keep the schema JSON)
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	tfjson "github.com/hashicorp/terraform-json"
)

// providerName is the provider's local name: resource type prefixes, docs file names.
const providerName = "libvirt"

func main() {
	var (
		dir       = flag.String("dir", "", "module root to generate docs in (default: the directory holding go.mod, found from the working directory)")
		schemaOut = flag.String("schema-out", "", "also write the provider schema JSON (terraform providers schema -json format) to this file")
		check     = flag.Bool("check", false, "do not touch docs/: render into a scratch copy and fail when docs/ differs from it")
		verbose   = flag.Bool("v", false, "show tfplugindocs' progress output")
	)
	flag.Parse()
	if err := run(*dir, *schemaOut, *check, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "tools/docs:", err)
		os.Exit(1)
	}
}

func run(dir, schemaOut string, check, verbose bool) error {
	start := time.Now()
	root, err := moduleRoot(dir)
	if err != nil {
		return err
	}

	js, err := schemaJSON(context.Background())
	if err != nil {
		return err
	}
	if schemaOut != "" {
		if err := os.WriteFile(schemaOut, js, 0o644); err != nil {
			return err
		}
	}

	tmp, err := os.MkdirTemp("", "libvirt-docs-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	schemaFile := filepath.Join(tmp, "schema.json")
	if err := os.WriteFile(schemaFile, js, 0o644); err != nil {
		return err
	}

	// -check renders into a scratch copy of the docs' sources and compares.
	target := root
	if check {
		target = filepath.Join(tmp, "provider")
		for _, d := range []string{"templates", "examples", "docs"} {
			if err := copyTree(filepath.Join(root, d), filepath.Join(target, d)); err != nil {
				return err
			}
		}
	}

	for _, args := range [][]string{
		{"generate",
			"--provider-dir", target,
			"--provider-name", providerName,
			"--rendered-provider-name", providerName,
			"--providers-schema", schemaFile,
			"--website-temp-dir", filepath.Join(tmp, "website"),
		},
		{"validate",
			"--provider-dir", target,
			"--provider-name", providerName,
			"--providers-schema", schemaFile,
		},
	} {
		if err := tfplugindocs(root, verbose, args...); err != nil {
			return err
		}
	}
	if check {
		stale, err := diffTrees(filepath.Join(root, "docs"), filepath.Join(target, "docs"))
		if err != nil {
			return err
		}
		if len(stale) > 0 {
			return fmt.Errorf("docs/ is out of date (run `go generate ./...`):\n  %s", strings.Join(stale, "\n  "))
		}
		if verbose {
			fmt.Fprintf(os.Stderr, "tools/docs: docs/ is up to date (%s)\n", time.Since(start).Round(10*time.Millisecond))
		}
		return nil
	}
	if verbose {
		fmt.Fprintf(os.Stderr, "tools/docs: docs/ regenerated in %s\n", time.Since(start).Round(10*time.Millisecond))
	}
	return nil
}

// schemaJSON is the provider's schema as `terraform providers schema -json` prints it,
// keyed by the local name, which is what tfplugindocs looks up.
func schemaJSON(ctx context.Context) ([]byte, error) {
	ps, err := providerSchema(ctx, "docs")
	if err != nil {
		return nil, fmt.Errorf("read the provider schema in-process: %w", err)
	}
	all := &tfjson.ProviderSchemas{
		FormatVersion: "1.0",
		Schemas:       map[string]*tfjson.ProviderSchema{providerName: ps},
	}
	js, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode the provider schema: %w", err)
	}
	// Round-trip through tfjson's own decoder (format version check included), as
	// tfplugindocs will read it.
	var check tfjson.ProviderSchemas
	if err := check.UnmarshalJSON(js); err != nil {
		return nil, fmt.Errorf("the provider schema JSON does not decode: %w", err)
	}
	return append(js, '\n'), nil
}

// tfplugindocs runs the module's pinned tfplugindocs (go.mod `tool` directive). Its
// chatter goes to stderr only with -v or when it fails.
func tfplugindocs(root string, verbose bool, args ...string) error {
	cmd := exec.Command("go", append([]string{"tool", "tfplugindocs"}, args...)...)
	cmd.Dir = root
	// Belt and braces: tfplugindocs must not go looking for Terraform or the network.
	cmd.Env = append(os.Environ(), "CHECKPOINT_DISABLE=1")
	var out bytes.Buffer
	if verbose {
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	} else {
		cmd.Stdout, cmd.Stderr = &out, &out
	}
	if err := cmd.Run(); err != nil {
		os.Stderr.Write(out.Bytes())
		return fmt.Errorf("go tool tfplugindocs %s: %w", args[0], err)
	}
	return nil
}

// moduleRoot is dir, or the nearest parent of the working directory that holds go.mod.
func moduleRoot(dir string) (string, error) {
	if dir != "" {
		return filepath.Abs(dir)
	}
	d, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", errors.New("no go.mod found above the working directory: run inside the module or pass -dir")
		}
		d = parent
	}
}

// copyTree copies the regular files under src to dst; a missing src copies nothing.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if errors.Is(err, os.ErrNotExist) && p == src {
			return filepath.SkipDir
		}
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644)
	})
}

// diffTrees lists the files that differ between two trees, are missing or are extra.
func diffTrees(have, want string) ([]string, error) {
	read := func(root string) (map[string][]byte, error) {
		files := map[string][]byte{}
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if errors.Is(err, os.ErrNotExist) && p == root {
				return filepath.SkipDir
			}
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			files[filepath.ToSlash(rel)] = b
			return nil
		})
		return files, err
	}
	h, err := read(have)
	if err != nil {
		return nil, err
	}
	w, err := read(want)
	if err != nil {
		return nil, err
	}
	var out []string
	for name, b := range w {
		switch hb, ok := h[name]; {
		case !ok:
			out = append(out, "docs/"+name+" is missing")
		case !bytes.Equal(hb, b):
			out = append(out, "docs/"+name+" differs")
		}
	}
	for name := range h {
		if _, ok := w[name]; !ok {
			out = append(out, "docs/"+name+" should not exist")
		}
	}
	sort.Strings(out)
	return out, nil
}
