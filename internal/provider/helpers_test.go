package provider_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/qcow2"
)

// Helpers the tests of the package share.

// importStep imports addr by id ("" for the resource's own id) and wants the state the
// apply made, but for the attributes in ignore.
func importStep(addr, id string, ignore ...string) resource.TestStep {
	return resource.TestStep{
		ResourceName:            addr,
		ImportState:             true,
		ImportStateId:           id,
		ImportStateVerify:       true,
		ImportStateVerifyIgnore: ignore,
	}
}

// sameConfig is steps, each applying config.
func sameConfig(config string, steps ...resource.TestStep) []resource.TestStep {
	for i := range steps {
		steps[i].Config = config
	}
	return steps
}

// planCase is a configuration that must fail to plan: body goes into a resource block,
// want (see acctest.Wrapped) is the error.
type planCase struct{ name, body, want string }

// expectPlanErrors is acctest.ExpectPlanErrors for cases that share one resource block:
// block is the resource with a %s where each case's body goes.
func expectPlanErrors(t *testing.T, block string, cases []planCase, minVersion ...tfversion.TerraformVersionCheck) {
	t.Helper()
	planErrors := make([]acctest.PlanError, 0, len(cases))
	for _, c := range cases {
		planErrors = append(planErrors, acctest.PlanError{Name: c.name, Config: acctest.OfflineProvider + fmt.Sprintf(block, c.body), Want: acctest.Wrapped(c.want)})
	}
	acctest.ExpectPlanErrors(t, planErrors, minVersion...)
}

// testPoolDir is a directory for a test pool next to the test host's own pool.
func testPoolDir(name string) string { return acctest.PoolDir(name) }

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func fileSHA256(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return sha256Hex(string(b))
}

// qcow2Header reads the qcow2 header of the image at p.
func qcow2Header(p string) (qcow2.Header, error) {
	f, err := os.Open(p)
	if err != nil {
		return qcow2.Header{}, err
	}
	defer f.Close()
	head := make([]byte, qcow2.HeaderSize)
	if _, err := io.ReadFull(f, head); err != nil {
		return qcow2.Header{}, err
	}
	return qcow2.Probe(head)
}

// imageVirtualSize reads the tiny guest image's virtual size from its qcow2 header.
func imageVirtualSize(t *testing.T, p string) int64 {
	t.Helper()
	h, err := qcow2Header(p)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return int64(h.VirtualSize)
}

// hcl is an expression written into a configuration as it is (a reference, a number).
type hcl string

// attr is the line `key = value` of a configuration: strings quoted, hcl as it is.
func attr(key string, value any) string {
	switch v := value.(type) {
	case string:
		return fmt.Sprintf("%s = %q", key, v)
	case hcl:
		return key + " = " + string(v)
	}
	return fmt.Sprintf("%s = %v", key, value)
}

// resourceHCL is a resource block of type typ named label, with the given lines (attr).
func resourceHCL(typ, label string, lines ...string) string {
	return fmt.Sprintf("\nresource %q %q {\n  %s\n}\n", typ, label, strings.Join(lines, "\n  "))
}

// blockHCL is a nested block `typ { ... }` of a resource body, with the given lines (attr
// or blockHCL).
func blockHCL(typ string, lines ...string) string {
	return typ + " {\n    " + strings.ReplaceAll(strings.Join(lines, "\n"), "\n", "\n    ") + "\n  }"
}

// volumeHCL is a libvirt_volume named name in the test pool, with more lines.
func volumeHCL(label, name string, lines ...string) string {
	return resourceHCL("libvirt_volume", label, append([]string{attr("name", name), attr("pool", acctest.Pool())}, lines...)...)
}

// withDefaults is defaults (attr lines), each replaced by the line of lines that sets the
// same attribute, followed by the other lines.
func withDefaults(defaults, lines []string) []string {
	key := func(l string) string { k, _, _ := strings.Cut(l, " = "); return k }
	out := slices.Clone(defaults)
	for _, l := range lines {
		if i := slices.IndexFunc(out, func(d string) bool { return key(d) == key(l) }); i >= 0 && i < len(defaults) {
			out[i] = l
		} else {
			out = append(out, l)
		}
	}
	return out
}

// requiredProviders is the terraform block every configuration starts with.
const requiredProviders = `
terraform {
  required_providers {
    libvirt = { source = "kvmforge/libvirt" }
  }
}
`

// providerAt is the terraform/provider preamble with the provider connecting to uri,
// with more lines for the provider block.
func providerAt(uri string, lines ...string) string {
	return requiredProviders + fmt.Sprintf(`
provider "libvirt" {
  uri = %q
  %s
}
`, uri, strings.Join(lines, "\n  "))
}

// proxiedProvider is providerAt a proxy at addr (qemu+tcp) in front of the daemon.
func proxiedProvider(addr string, lines ...string) string {
	return providerAt("qemu+tcp://"+addr+"/system", lines...)
}

// idleDomain is the attributes of a domain that is only ever defined, never started: the
// smallest libvirt takes under TCG, without a guest-agent channel or graphics.
const idleDomain = `type       = "qemu"
  vcpu       = 1
  memory_mib = 128
  running    = false
  qemu_agent = false
  graphics   = { type = "none" }`

// domainHCL is libvirt_domain.test named name on the volume (key) disk: 1 vCPU and 256
// MiB, with lines (attr lines replace those).
func domainHCL(name, disk string, lines ...string) string {
	return resourceHCL("libvirt_domain", "test", withDefaults([]string{attr("name", name), attr("vcpu", 1), attr("memory_mib", 256)},
		append(lines, fmt.Sprintf("disk {\n    volume_id = %q\n  }", disk)))...)
}

// stoppedDomainHCL is libvirt_domain.test: a shut-off domain named name on the disk at
// path, with memory_mib and more lines.
func stoppedDomainHCL(name, disk string, memoryMiB int, lines ...string) string {
	return resourceHCL("libvirt_domain", "test", append([]string{attr("name", name), attr("vcpu", 1),
		attr("memory_mib", memoryMiB), attr("running", false), fmt.Sprintf("disk {\n    path = %q\n  }", disk)}, lines...)...)
}
