package acctest

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// SkipBelowCLI skips a test that drives the CLI itself (not through resource.Test, whose
// TerraformVersionChecks do this) when the CLI under test (TF_ACC_TERRAFORM_PATH, else
// terraform on PATH) is older than least, naming why. tools/ci/cli-versions.txt lists every
// such test with the same version, so that make check refuses an older CLI before it
// starts and the old CLIs' legs leave the test out by name: a skip here fails the run.
func SkipBelowCLI(t testing.TB, least, why string) {
	t.Helper()
	cli := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if cli == "" {
		cli = "terraform"
	}
	out, err := exec.Command(cli, "version").Output()
	if err != nil {
		t.Fatalf("%s version: %v", cli, err)
	}
	// Not the first line: OpenTofu prints CLI configuration warnings on stdout before it.
	m := regexp.MustCompile(`(?:Terraform|OpenTofu) v(\d+\.\d+\.\d+)`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("no version in the output of %s version: %q", cli, out)
	}
	if versionBelow(m[1], least) {
		t.Skipf("%s is %s; this test needs %s or newer (%s)", cli, m[1], least, why)
	}
}

// versionBelow reports whether dotted version a is below b.
func versionBelow(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		x, _ := strconv.Atoi(pa[i])
		y, _ := strconv.Atoi(pb[i])
		if x != y {
			return x < y
		}
	}
	return len(pa) < len(pb)
}
