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
	logPath := filepath.Join(t.TempDir(), "trace.log")
	w := newCLIWork(t, config, "TF_LOG=trace", "TF_LOG_PATH="+logPath,
		"TF_VAR_private_key="+sshd.ClientKeyPEM, "TF_VAR_password="+password)
	defer w.mustRun("destroy", "-auto-approve", "-input=false")
	w.mustRun("apply", "-auto-approve", "-input=false")
	w.mustRun("plan", "-input=false")

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
