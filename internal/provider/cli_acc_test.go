package provider_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// cliPath is the CLI the tests run: TF_ACC_TERRAFORM_PATH, else terraform on PATH.
func cliPath(t *testing.T) string {
	t.Helper()
	if cli := acctest.Env("TF_ACC_TERRAFORM_PATH", ""); cli != "" {
		return cli
	}
	cli, err := exec.LookPath("terraform")
	if err != nil {
		t.Fatal("no terraform: set TF_ACC_TERRAFORM_PATH")
	}
	return cli
}

// cliRun runs the Terraform (or OpenTofu) CLI in a working directory and returns its
// combined output and exit code.
type cliRun func(args ...string) (output string, exitCode int)

// cliWorkdir is a working directory for the real CLI (TF_ACC_TERRAFORM_PATH, else
// terraform on PATH) with the built provider installed through dev_overrides, the way a
// user runs a configuration: for what plugin-testing cannot drive (for_each instances
// with string keys, -generate-config-out, TF_LOG captures). files are written into it.
func cliWorkdir(t *testing.T, files map[string]string) (string, cliRun) {
	t.Helper()
	cli := cliPath(t)
	bin := providerBinary(t)
	work := t.TempDir()
	for name, content := range files {
		writeTestFile(t, filepath.Join(work, name), content)
	}
	writeTestFile(t, filepath.Join(work, "dev.tfrc"), fmt.Sprintf("provider_installation {\n  dev_overrides {\n    \"kvmforge/libvirt\" = %q\n  }\n  direct {}\n}\n", filepath.Dir(bin)))
	env := append(os.Environ(), "TF_CLI_CONFIG_FILE="+filepath.Join(work, "dev.tfrc"), "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1", "TF_REATTACH_PROVIDERS=")
	return work, func(args ...string) (string, int) {
		cmd := exec.Command(cli, args...)
		cmd.Dir, cmd.Env = work, env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			return out.String(), ee.ExitCode()
		case err != nil:
			t.Fatalf("%s: %v", cli, err)
		}
		return out.String(), 0
	}
}
