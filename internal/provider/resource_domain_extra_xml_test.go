package provider_test

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

const (
	extraClock    = `<clock offset='utc'><timer name='rtc' tickpolicy='catchup'/><timer name='pit' tickpolicy='delay'/><timer name='hpet' present='no'/></clock>`
	extraMemtune  = `<memtune><hard_limit unit='KiB'>1048576</hard_limit><soft_limit unit='KiB'>524288</soft_limit></memtune>`
	extraShares   = `<cputune><shares>2048</shares></cputune>`
	extraBlkio    = `<blkiotune><weight>500</weight></blkiotune>`
	extraPerf     = `<perf><event name='cmt' enabled='no'/></perf>`
	extraSeclabel = `<seclabel type='none' model='none'/>`
)

// extra_xml on a stopped domain: a clock with timers, memtune and cputune shares beside
// the typed cpu.pinning are defined (the shares merged with the pin), plan clean, and
// import back; memtune changed outside Terraform shows as a change; a changed fragment updates the definition, a removed one takes its
// element away; owned and unknown elements are refused at plan time, and one libvirt
// stores another way fails the apply naming it.
func TestAccDomainExtraXML(t *testing.T) {
	name := acctest.RandomName("extraxml")
	config := func(fragments ...string) string {
		list := make([]string, len(fragments))
		for i, f := range fragments {
			list[i] = fmt.Sprintf("%q", f)
		}
		return acctest.ProviderBlock("") + resourceHCL("libvirt_domain", "test", attr("name", name), attr("vcpu", 2),
			attr("memory_mib", 64), attr("running", false), `cpu = { pinning = { "0" = "0" } }`,
			"extra_xml = ["+strings.Join(list, ", ")+"]")
	}
	// inactive checks libvirt's definition.
	inactive := func(check func(d *libvirtxml.Domain) error) resource.TestCheckFunc {
		return acctest.HostCheck(func() error {
			d, err := acctest.InspectDomain(t, name)
			if err != nil {
				return err
			}
			return check(d.Inactive)
		})
	}
	clockTimers := func(want int) func(*libvirtxml.Domain) error {
		return func(d *libvirtxml.Domain) error {
			if d.Clock == nil || len(d.Clock.Timer) != want {
				return fmt.Errorf("clock %+v, want %d timers", d.Clock, want)
			}
			return nil
		}
	}
	all := func(checks ...func(*libvirtxml.Domain) error) resource.TestCheckFunc {
		return inactive(func(d *libvirtxml.Domain) error {
			for _, c := range checks {
				if err := c(d); err != nil {
					return err
				}
			}
			return nil
		})
	}
	memtune := func(want bool) func(*libvirtxml.Domain) error {
		return func(d *libvirtxml.Domain) error {
			if got := d.MemoryTune != nil && d.MemoryTune.HardLimit != nil && d.MemoryTune.HardLimit.Value == 1048576; got != want {
				return fmt.Errorf("memtune %+v, want it there: %v", d.MemoryTune, want)
			}
			return nil
		}
	}
	shares := func(d *libvirtxml.Domain) error {
		tune := d.CPUTune
		if tune == nil || tune.Shares == nil || tune.Shares.Value != 2048 || len(tune.VCPUPin) != 1 || tune.VCPUPin[0].CPUSet != "0" {
			return fmt.Errorf("cputune %+v: want shares 2048 and the pin of vCPU 0", tune)
		}
		return nil
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{
				// Refused at plan time, naming the fragment and the attribute to use.
				Config:      config(extraClock, `<vcpu>2</vcpu>`),
				ExpectError: regexp.MustCompile(`extra_xml\[1\][\s\S]*managed\s+by\s+vcpu`),
			},
			{
				Config:      config(`<cputune><shares>2</shares><vcpupin vcpu='1' cpuset='0'/></cputune>`),
				ExpectError: regexp.MustCompile(`extra_xml\[0\][\s\S]*cpu\.pinning`),
			},
			{
				Config:      config(`<nosuchelement/>`),
				ExpectError: regexp.MustCompile(`extra_xml\[0\][\s\S]*not\s+an\s+element\s+of\s+libvirt's\s+domain\s+format`),
			},
			{
				Config:            config(extraClock, extraMemtune, extraShares),
				ConfigPlanChecks:  acctest.Plans(),
				ConfigStateChecks: acctest.State(domRes, "extra_xml.0", extraClock, "extra_xml.1", extraMemtune, "extra_xml.2", extraShares),
				Check:             all(clockTimers(3), memtune(true), shares),
			},
			{ResourceName: domRes, ImportState: true, ImportStateVerify: true, ImportStateId: name, ImportStateVerifyIgnore: []string{"timeouts"}},
			{
				// memtune changed outside Terraform: drift, and the apply writes the fragment back.
				PreConfig: func() {
					d := definition(t, name)
					d.MemoryTune.HardLimit.Value = 2097152
					acctest.DefineDomain(t, marshalDomain(t, d))
				},
				Config:           config(extraClock, extraMemtune, extraShares),
				ConfigPlanChecks: acctest.Updates(domRes, "definition"),
				Check:            all(clockTimers(3), memtune(true), shares),
			},
			{
				// One fragment changed: the clock loses its timers.
				Config:           config(`<clock offset='utc'><timer name='rtc' tickpolicy='catchup'/></clock>`, extraMemtune, extraShares),
				ConfigPlanChecks: acctest.Updates(domRes, "definition"),
				Check:            all(clockTimers(1), memtune(true), shares),
			},
			{
				// One removed: memtune is gone from the definition, the rest stays.
				Config:            config(`<clock offset='utc'><timer name='rtc' tickpolicy='catchup'/></clock>`, extraShares),
				ConfigPlanChecks:  acctest.Updates(domRes, "definition"),
				ConfigStateChecks: acctest.State(domRes, "extra_xml.1", extraShares),
				Check:             all(clockTimers(1), memtune(false), shares),
			},
			{
				// libvirt writes memtune in KiB: as written here it would never plan clean.
				Config: config(`<clock offset='utc'><timer name='rtc' tickpolicy='catchup'/></clock>`, extraShares,
					`<memtune><hard_limit unit='MiB'>1024</hard_limit></memtune>`),
				ExpectError: regexp.MustCompile(`extra_xml\[2\][\s\S]*libvirt\s+stored\s+the\s+element\s+differently`),
			},
		},
	})
}

// A domain defined by virsh with a clock with timers, memtune, blkiotune, perf and a
// seclabel of type none imports with one extra_xml fragment for each (libvirt's own
// defaults left out); the generated configuration plans clean, and a description
// change leaves every other part of the definition as it was.
func TestAccDomainExtraXMLImportDefined(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("extraimp")
	t.Cleanup(func() { // runs after RemoveDomainAtEnd's: libvirt no longer has the domain
		if err := acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)})(nil); err != nil {
			t.Errorf("after the test: %v", err)
		}
	})
	acctest.RemoveDomainAtEnd(t, name) // the import leaves the domain to the test
	acctest.DefineDomain(t, fmt.Sprintf(`<domain type='qemu'><name>%s</name><memory unit='MiB'>64</memory><vcpu>1</vcpu>
  <blkiotune><weight>500</weight></blkiotune>
  <memtune><hard_limit unit='KiB'>1048576</hard_limit><soft_limit unit='MiB'>512</soft_limit></memtune>
  <os><type arch='x86_64'>hvm</type></os>
  %s
  <perf><event name='cmt' enabled='no'/></perf>
  <seclabel type='none'/>
</domain>`, name, extraClock))
	w := newCLIWork(t, acctest.ProviderBlock("")+fmt.Sprintf("import {\n  to = %s\n  id = %q\n}\n", domRes, name))
	if out, code := w.run("plan", "-input=false", "-generate-config-out=generated.tf"); code != 0 {
		t.Fatalf("plan -generate-config-out (exit %d):\n%s", code, out)
	}
	raw, _ := os.ReadFile(w.path("generated.tf"))
	generated := string(raw)
	for _, want := range []string{extraClock, extraMemtune, extraBlkio, extraPerf, extraSeclabel} {
		if !strings.Contains(generated, fmt.Sprintf("%q", want)) {
			t.Errorf("the generated configuration lacks the fragment %s:\n%s", want, generated)
		}
	}
	if n := strings.Count(generated, `"<`); n != 5 { // the five fragments, nothing else
		t.Errorf("the generated configuration has %d XML fragments, want the five:\n%s", n, generated)
	}
	if out, code := w.run("apply", "-auto-approve", "-input=false"); code != 0 || !strings.Contains(out, "1 imported, 0 added, 0 changed, 0 destroyed") {
		t.Fatalf("apply of the generated config (exit %d) did more than import:\n%s\n--- generated.tf:\n%s", code, out, generated)
	}
	if out, code := w.run("plan", "-input=false", "-detailed-exitcode"); code != 0 {
		t.Fatalf("the plan after importing with the generated config is not empty (exit %d):\n%s\n--- generated.tf:\n%s", code, out, generated)
	}
	before := definition(t, name)
	edited := describe(generated) // domains_adopt_lossless_acc_test.go
	if edited == generated {
		t.Fatalf("no description in the generated configuration to change:\n%s", generated)
	}
	w.write("generated.tf", edited)
	if out, code := w.run("apply", "-auto-approve", "-input=false"); code != 0 || !strings.Contains(out, "0 added, 1 changed, 0 destroyed") {
		t.Fatalf("apply of the description (exit %d):\n%s", code, out)
	}
	if out, code := w.run("plan", "-input=false", "-detailed-exitcode"); code != 0 {
		t.Fatalf("the plan after the description change is not empty (exit %d):\n%s", code, out)
	}
	after := definition(t, name)
	t.Logf("imported and updated; generated configuration:\n%s", edited)
	if after.Description != "adopted" {
		t.Errorf("description %q after the update", after.Description)
	}
	// The provider's record in <metadata> is its own bookkeeping (the fragments it wrote).
	after.Description, after.Metadata, before.Metadata = before.Description, nil, nil
	if a, b := marshalDomain(t, after), marshalDomain(t, before); a != b {
		t.Errorf("the update changed more than the description:\n--- before\n%s\n--- after\n%s", b, a)
	}
	w.run("state", "rm", domRes)
}

// definition is libvirt's inactive definition of the domain.
func definition(t *testing.T, name string) *libvirtxml.Domain {
	t.Helper()
	d, err := acctest.InspectDomain(t, name)
	if err != nil {
		t.Fatal(err)
	}
	return d.Inactive
}

func marshalDomain(t *testing.T, d *libvirtxml.Domain) string {
	t.Helper()
	text, err := d.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return text
}
