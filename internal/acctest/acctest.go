// Package acctest is the harness every acceptance test uses: provider factories, the
// TF_ACC gate, the test host's URI, unique names, sweepers and CheckDestroy helpers that
// ask libvirt directly. Acceptance tests run against a real libvirtd — see tools/testhost.sh.
package acctest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider"
)

// NamePrefix starts the name of everything a test creates, so sweepers find leftovers.
const NamePrefix = "tfacc-"

func init() {
	// terraform-plugin-testing reattaches the in-process provider under
	// <host>/<namespace>/libvirt; make that our registry address so configs can name
	// source = "kvmforge/libvirt" under Terraform and OpenTofu alike.
	if os.Getenv("TF_ACC_PROVIDER_NAMESPACE") == "" {
		os.Setenv("TF_ACC_PROVIDER_NAMESPACE", "kvmforge")
	}
	// OpenTofu resolves the short source "kvmforge/libvirt" on its own registry host, as it
	// does for its users; reattach the provider there.
	if OpenTofu() && os.Getenv("TF_ACC_PROVIDER_HOST") == "" {
		os.Setenv("TF_ACC_PROVIDER_HOST", "registry.opentofu.org")
	}
	// An unset TF_CLI_CONFIG_FILE, or one naming a missing file (this workplace's machines
	// set it so), makes the CLI print a warning that breaks the version check of
	// terraform-plugin-testing under OpenTofu.
	if _, err := os.Stat(os.Getenv("TF_CLI_CONFIG_FILE")); err != nil {
		_, self, _, _ := runtime.Caller(0)
		os.Setenv("TF_CLI_CONFIG_FILE", filepath.Join(filepath.Dir(self), "cli.tfrc"))
	}
	if os.Getenv("CHECKPOINT_DISABLE") == "" {
		os.Setenv("CHECKPOINT_DISABLE", "1") // no version check calls from the test sandbox
	}
	// Every refresh the provider's shortcut answers also takes the full way and must agree
	// (internal/provider/server_read.go): each plan of a test checks both.
	if os.Getenv("LIBVIRT_PROVIDER_VERIFY_SHORTCUT") == "" {
		os.Setenv("LIBVIRT_PROVIDER_VERIFY_SHORTCUT", "1")
	}
}

// OpenTofu reports whether the tests run under OpenTofu (TF_ACC_TERRAFORM_PATH names tofu).
func OpenTofu() bool {
	return strings.Contains(filepath.Base(os.Getenv("TF_ACC_TERRAFORM_PATH")), "tofu")
}

// ProtoV6ProviderFactories runs the provider in the test process.
var ProtoV6ProviderFactories = map[string]func() (tfprotov6.ProviderServer, error){
	"libvirt": func() (tfprotov6.ProviderServer, error) { return provider.ProtocolServer("test")(), nil },
}

// URI is the libvirt URI acceptance tests use (LIBVIRT_TEST_URI, default qemu:///system).
func URI() string {
	if u := os.Getenv("LIBVIRT_TEST_URI"); u != "" {
		return u
	}
	return "qemu:///system"
}

// Env returns a test setting from the environment tools/testhost.sh prints, or def.
func Env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// KVM reports whether the test host lets libvirt use /dev/kvm (LIBVIRT_TEST_KVM=use, from
// tools/testhost.sh env; KVMFORGE_KVM=auto picks it where KVM works, e.g. on CI runners with
// nested virtualisation). Without it the host offers only TCG: domain type qemu.
func KVM() bool { return os.Getenv("LIBVIRT_TEST_KVM") == "use" }

// DomainTypes are the domain types the test host offers (sorted, as libvirt_host reports them).
func DomainTypes() []string {
	if KVM() {
		return []string{"kvm", "qemu"}
	}
	return []string{"qemu"}
}

// DefaultDomainType is what libvirt_domain.type defaults to on the test host: kvm when offered.
func DefaultDomainType() string {
	if KVM() {
		return "kvm"
	}
	return "qemu"
}

// Pool and Network are the test host's storage pool and NAT network.
func Pool() string    { return Env("LIBVIRT_TEST_POOL", "default") }
func Network() string { return Env("LIBVIRT_TEST_NETWORK", "default") }

// GuestImage is the tiny test guest's qcow2 (tools/guest-image/build.sh): from
// LIBVIRT_TEST_IMAGE, else the build's stable symlink. Tests copy or overlay it, never
// boot it in place.
func GuestImage(t testing.TB) string {
	t.Helper()
	p := Env("LIBVIRT_TEST_IMAGE", filepath.Join(Env("KVMFORGE_CACHE", "/var/cache/kvmforge"), "guest-image", "tiny.qcow2"))
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("tiny guest image missing (build it with `make image`): %v", err)
	}
	return p
}

// RequireAcc skips a test that needs the real daemon unless TF_ACC is set (the usual gate
// of acceptance tests), and fails it — never skips — when TF_ACC is set but the host does
// not answer: a CI run without its libvirt host must go red, not quietly green.
func RequireAcc(t testing.TB) {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1 and bring up a libvirt host (make testhost-up)")
	}
	hostCheck.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, hostErr = Client(t).HostInfo(ctx)
	})
	if hostErr != nil {
		t.Fatalf("libvirt test host %s does not answer (start it with `make testhost-up`): %v", URI(), hostErr)
	}
}

var (
	hostCheck sync.Once
	hostErr   error
)

// PreCheck is RequireAcc in the shape resource.TestCase wants.
func PreCheck(t *testing.T) func() {
	return func() { RequireAcc(t) }
}

// Client is a client of the test host, for checks that ask libvirt directly. It shares
// nothing with the pool of the provider under test (its pool size differs, so its key does).
func Client(t testing.TB) *libvirt.Client {
	t.Helper()
	c, err := libvirt.NewClient(libvirt.Config{URI: URI(), MaxConnections: 2})
	if err != nil {
		t.Fatalf("acctest: client for %s: %v", URI(), err)
	}
	return c
}

// RandomName is a unique object name for a test: tfacc-<kind>-<random>.
func RandomName(kind string) string {
	return NamePrefix + kind + "-" + strings.ToLower(acctest.RandString(8))
}

// ProviderBlock is the terraform/provider preamble every test config starts with.
func ProviderBlock(extra string) string {
	return fmt.Sprintf(`
terraform {
  required_providers {
    libvirt = { source = "kvmforge/libvirt" }
  }
}

provider "libvirt" {
  uri = %q
%s
}
`, URI(), extra)
}

// ErrorText matches an error message that contains text, however Terraform wrapped its
// lines: spaces in text match any run of whitespace.
func ErrorText(text string) *regexp.Regexp {
	parts := strings.Fields(text)
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile(strings.Join(parts, `\s+`))
}

// Run is resource.Test against the provider under test (ProtoV6ProviderFactories) with
// the acceptance pre-check (PreCheck), for a test case that sets neither.
//
// The test runs in parallel with the other acceptance tests (t.Parallel; make testacc
// sets how many at once): most of an acceptance test's time is the CLI and libvirt
// waiting, and every test names its objects at random. A test that disturbs the others
// (stops libvirtd, bounds wall-clock time, sets environment variables) calls RunSerial.
// Go runs every serial test first, alone, then the parallel ones together.
//
// A step whose configuration comes from files (ConfigDirectory, ConfigFile) holds a
// terraform block, and plugin-testing then wants the providers on the steps, not on the
// case: Run gives them to every step of such a case.
func Run(t *testing.T, c resource.TestCase) {
	t.Helper()
	Parallel(t)
	RunSerial(t, c)
}

// Parallel makes t a parallel test now (once; Run calls it too). A test calls it first
// when its setup must not happen in the serial phase: a dir pool defined inactive there
// is found active after a fault test restarts libvirtd (libvirt starts a dir pool whose
// directory exists when it reloads its pools).
func Parallel(t *testing.T) {
	if _, again := parallelTests.LoadOrStore(t, true); !again {
		t.Parallel() // once per test: a test may run several cases
	}
}

// parallelTests are the tests Run has made parallel.
var parallelTests sync.Map

// RunSerial is Run for a test that must not run beside others.
func RunSerial(t *testing.T, c resource.TestCase) {
	t.Helper()
	switch {
	case c.ProtoV6ProviderFactories != nil:
	case fromFiles(c.Steps):
		for i := range c.Steps {
			if c.Steps[i].ProtoV6ProviderFactories == nil {
				c.Steps[i].ProtoV6ProviderFactories = ProtoV6ProviderFactories
			}
		}
	default:
		c.ProtoV6ProviderFactories = ProtoV6ProviderFactories
	}
	if c.PreCheck == nil {
		c.PreCheck = PreCheck(t)
	}
	resource.Test(t, c)
}

// fromFiles tells whether any step takes its configuration from files.
func fromFiles(steps []resource.TestStep) bool {
	for _, s := range steps {
		if s.ConfigDirectory != nil || s.ConfigFile != nil {
			return true
		}
	}
	return false
}

// RunUnit is resource.UnitTest against the provider under test: for cases that need no
// daemon (plan-time validation).
func RunUnit(t *testing.T, c resource.TestCase) {
	t.Helper()
	if c.ProtoV6ProviderFactories == nil {
		c.ProtoV6ProviderFactories = ProtoV6ProviderFactories
	}
	resource.UnitTest(t, c)
}
