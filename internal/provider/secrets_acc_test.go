package provider_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// A user's TF_LOG=trace run — the real Terraform/OpenTofu CLI and the real provider binary,
// connected over qemu+ssh with a private key and a password, creating a cloud-init seed
// with sensitive user-data — must not show any of those secrets in the log.
func TestAccSecretsNotLogged(t *testing.T) {
	acctest.RequireAcc(t)
	sshd := acctest.StartSSHD(t)
	cli := cliPath(t)
	bin := providerBinary(t)

	work := t.TempDir()
	const password = "pw-9f3c1d7e-never-log-me"
	const userDataMarker = "ud-5be1a2c4-never-log-me"
	keyLines := strings.Split(strings.TrimSpace(sshd.ClientKeyPEM), "\n")
	keyBody := keyLines[len(keyLines)/2] // a line of the key's base64 body
	seed := acctest.RandomName("secrets")
	config := requiredProviders + fmt.Sprintf(`
variable "private_key" {
  type      = string
  sensitive = true
}

variable "password" {
  type      = string
  sensitive = true
}

provider "libvirt" {
  uri = %q
  ssh {
    private_key = var.private_key
    password    = var.password
    known_hosts = %q
  }
}

data "libvirt_host" "this" {}

resource "libvirt_cloudinit_iso" "seed" {
  name        = "%s.iso"
  pool        = %q
  instance_id = "i-secrets"
  hostname    = "secrets"
  user_data   = "#cloud-config\nwrite_files:\n  - path: /root/token\n    content: %s\n"
}
`, sshd.URI(), sshd.KnownHostsLine, seed, acctest.Pool(), userDataMarker)
	writeTestFile(t, filepath.Join(work, "main.tf"), config)
	writeTestFile(t, filepath.Join(work, "dev.tfrc"), fmt.Sprintf(`provider_installation {
  dev_overrides {
    "kvmforge/libvirt" = %q
  }
  direct {}
}
`, filepath.Dir(bin)))
	logPath := filepath.Join(work, "trace.log")
	env := append(os.Environ(),
		"TF_CLI_CONFIG_FILE="+filepath.Join(work, "dev.tfrc"),
		"TF_LOG=trace", "TF_LOG_PATH="+logPath, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1",
		"TF_VAR_private_key="+sshd.ClientKeyPEM, "TF_VAR_password="+password,
		"TF_REATTACH_PROVIDERS=", // the real binary, not the in-process server
	)
	run := func(args ...string) {
		cmd := exec.Command(cli, args...)
		cmd.Dir, cmd.Env = work, env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s %s: %v\n%s", filepath.Base(cli), strings.Join(args, " "), err, out.String())
		}
	}
	defer run("destroy", "-auto-approve", "-input=false")
	run("apply", "-auto-approve", "-input=false")
	run("plan", "-input=false")

	log, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	// The log must show that the provider really ran and logged at trace level, or
	// the absence of secrets proves nothing.
	for _, want := range []string{"libvirt_cloudinit_iso", "[TRACE] provider.terraform-provider-libvirt"} {
		if !bytes.Contains(log, []byte(want)) {
			t.Fatalf("trace log (%d bytes) lacks %q: it does not show the provider's own logging", len(log), want)
		}
	}
	for what, secret := range map[string]string{"the SSH private key": keyBody, "the SSH password": password, "the user-data": userDataMarker} {
		if bytes.Contains(log, []byte(secret)) {
			t.Errorf("TF_LOG=trace log shows %s", what)
		}
	}
}

// providerBinary is LIBVIRT_TEST_PROVIDER_BIN (make builds it), else a fresh build.
func providerBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("LIBVIRT_TEST_PROVIDER_BIN"); p != "" {
		return p
	}
	out := filepath.Join(t.TempDir(), "terraform-provider-libvirt")
	cmd := exec.Command("go", "build", "-o", out, ".")
	cmd.Dir = "../.."
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the provider: %v\n%s", err, b)
	}
	return out
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
