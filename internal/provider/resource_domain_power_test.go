package provider_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

const powerRes = "libvirt_domain_power.p"

// powerDomainConfig is a running tiny guest on the test network that waits for its lease;
// seed is the id of its cloud-init seed (a string, or an hcl reference).
func powerDomainConfig(name, disk string, seed any, network string, agent bool) string {
	return resourceHCL("libvirt_domain", "test", attr("name", name), attr("vcpu", 1), attr("memory_mib", 256),
		attr("qemu_agent", agent), attr("cloudinit_id", seed), fmt.Sprintf("disk {\n    volume_id = %q\n  }", disk),
		fmt.Sprintf("network_interface {\n    network = %q\n    wait_for_ip {\n      source  = \"lease\"\n      timeout = \"4m\"\n    }\n  }", network),
		"shutdown = {\n    timeout = \"10s\"\n  }")
}

func powerConfig(action, timeout, trigger string) string {
	return resourceHCL("libvirt_domain_power", "p", attr("domain_id", hcl("libvirt_domain.test.id")), attr("action", action),
		attr("timeout", timeout), attr("triggers", hcl(fmt.Sprintf("{ n = %q }", trigger))))
}

// leaseExpiry is the newest expiry of the DHCP leases of mac on network.
func leaseExpiry(t *testing.T, network, mac string) (time.Time, error) {
	leases, err := acctest.Leases(t, network)
	if err != nil {
		return time.Time{}, err
	}
	var newest time.Time
	for _, l := range leases[mac] {
		if l.Expiry.After(newest) {
			newest = l.Expiry
		}
	}
	if newest.IsZero() {
		return newest, fmt.Errorf("no lease for %s on %s", mac, network)
	}
	return newest, nil
}

// A running guest rebooted through libvirt_domain_power comes back: running, and it
// asks for its lease again (the lease's expiry moves on); the domain plans clean. A
// changed trigger reboots it again. Then destroy forces it off, and the domain's own
// running = true wants it started again: that resource stays the source of truth.
func TestAccDomainPower_reboot(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("pow")
	disk := acctest.Overlay(t, name+".qcow2")
	seed := acctest.Seed(t, name+"-seed.iso", strings.ReplaceAll(name, "tfacc-", "tfaccvm-"))
	network := acctest.Network()
	dom := acctest.ProviderBlock("") + powerDomainConfig(name, disk, seed, network, true)

	var mac string
	var before time.Time
	record := func(s *terraform.State) error {
		mac, _ = domAttr(s, "network_interface.0.mac")
		var err error
		before, err = leaseExpiry(t, network, mac)
		return err
	}
	// renewed waits (the guest is rebooting) for a lease newer than the one recorded.
	renewed := func(s *terraform.State) error {
		deadline := time.Now().Add(3 * time.Minute)
		for {
			after, err := leaseExpiry(t, network, mac)
			if err == nil && after.After(before) {
				before = after
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("after the reboot the lease of %s still expires at %s (err %v): the guest did not ask again", mac, before, err)
			}
			time.Sleep(2 * time.Second)
		}
	}
	running := func(s *terraform.State) error {
		live, err := acctest.InspectDomain(t, name)
		if err != nil {
			return err
		}
		if !live.Active {
			return fmt.Errorf("domain %s is not running after the reboot", name)
		}
		return nil
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{
				Config:           dom,
				ConfigPlanChecks: acctest.Plans(),
				Check:            record,
			},
			{
				PreConfig:        func() { time.Sleep(2 * time.Second) }, // the expiry has a resolution of seconds
				Config:           dom + powerConfig("reboot", "2m", "1"),
				ConfigPlanChecks: acctest.Plans(),
				ConfigStateChecks: acctest.State(powerRes,
					"domain_state", "running",
					"domain_name", name,
					"id", regexp.MustCompile(`^[0-9a-f-]{36}/reboot$`),
				),
				Check: resource.ComposeTestCheckFunc(running, renewed),
			},
			{
				// A changed timeout is an in-place update: no new reboot.
				Config:           dom + powerConfig("reboot", "3m", "1"),
				ConfigPlanChecks: acctest.Does(powerRes, acctest.Update),
			},
			{
				PreConfig:        func() { time.Sleep(2 * time.Second) },
				Config:           dom + powerConfig("reboot", "3m", "2"),
				ConfigPlanChecks: acctest.Does(powerRes, acctest.DestroyBeforeCreate),
				Check:            resource.ComposeTestCheckFunc(running, renewed),
			},
			{
				// destroy forces it off; the domain (running = true) then plans to start it.
				Config:            dom + powerConfig("destroy", "2m", "3"),
				ConfigStateChecks: acctest.State(powerRes, "domain_state", "shutoff"),
				Check: func(*terraform.State) error {
					if live, err := acctest.InspectDomain(t, name); err != nil || live.Active {
						return fmt.Errorf("domain %s still running after destroy (err %v)", name, err)
					}
					return nil
				},
				ExpectNonEmptyPlan: true,
			},
		},
	})
}

// A graceful shutdown of a guest that ignores the power button (acpid killed by its
// user-data script, no guest-agent channel) fails after the timeout with an error that
// names the domain and the timeout; the guest is not forced off.
func TestAccDomainPower_shutdownTimeout(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("pow")
	disk := acctest.Overlay(t, name+".qcow2")
	network := acctest.Network()
	dom := acctest.ProviderBlock("") + resourceHCL("libvirt_cloudinit_iso", "seed", attr("name", name+"-seed.iso"),
		attr("pool", acctest.Pool()), attr("instance_id", name), attr("hostname", strings.ReplaceAll(name, "tfacc-", "tfaccvm-")),
		attr("user_data", "#!/bin/sh\nkillall acpid\ntouch /run/tinyguest/no-qemu-ga\nkillall qemu-ga\n")) +
		powerDomainConfig(name, disk, hcl("libvirt_cloudinit_iso.seed.id"), network, false)

	stillRunning := func() {
		live, err := acctest.InspectDomain(t, name)
		if err != nil {
			t.Fatal(err)
		}
		if !live.Active {
			t.Fatalf("domain %s was stopped: a graceful shutdown must never force it off", name)
		}
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{
			"domain " + name: acctest.DomainLookup(name),
			"seed":           acctest.VolumeLookup(acctest.Pool(), name+"-seed.iso"),
		}),
		Steps: []resource.TestStep{
			{
				Config:           dom,
				ConfigPlanChecks: acctest.Plans(),
			},
			{
				// The user-data script runs right after the lease: give it a moment.
				PreConfig:   func() { time.Sleep(5 * time.Second) },
				Config:      dom + powerConfig("shutdown", "10s", "1"),
				ExpectError: regexp.MustCompile(`domain\s+` + regexp.QuoteMeta(name) + `\s+did\s+not\s+shut\s+off\s+within\s+10s`),
			},
			{
				PreConfig:        stillRunning,
				Config:           dom,
				ConfigPlanChecks: acctest.Plans(),
				// Without the power resource the domain is left as it is: running.
				Check: acctest.HostCheck(func() error {
					live, err := acctest.InspectDomain(t, name)
					if err != nil {
						return err
					}
					if !live.Active {
						return fmt.Errorf("domain %s is not running after the failed graceful shutdown", name)
					}
					return nil
				}),
			},
		},
	})
}

func TestAccDomainPower_missingDomain(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("pow")
	acctest.Run(t, resource.TestCase{
		// Starting a domain that does not exist defines none.
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{{
			Config:      acctest.ProviderBlock("") + resourceHCL("libvirt_domain_power", "p", attr("domain_id", name), attr("action", "start")),
			ExpectError: acctest.ErrorText(fmt.Sprintf("domain %q does not exist", name)),
		}},
	})
}

// Bad input is refused at plan time, on the offline provider: a unit test.
func TestDomainPower_badInput(t *testing.T) {
	expectPlanErrors(t, "resource \"libvirt_domain_power\" \"p\" {\n  domain_id = \"x\"\n  %s\n}\n", []planCase{
		{"action", `action = "suspend"`, regexp.QuoteMeta(`value must be one of`)},
		{"timeout", "action = \"shutdown\"\n  timeout = \"soon\"", regexp.QuoteMeta(`"soon" is not a duration`)},
	})
}
