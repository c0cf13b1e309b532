package provider_test

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// UEFI through libvirt's firmware auto-selection: the domain gets its own nvram
// varstore, which is gone after destroy.
func TestAccDomain_uefi(t *testing.T) {
	name, disk := acctest.DomainDisk(t, "dom")
	var nvram string
	config := func(running bool, graphics string) string {
		return acctest.ProviderBlock("") + domainHCL(name, disk, attr("running", running), attr("firmware", "uefi"), `os = { machine = "q35" }`,
			attr("qemu_agent", false), attr("graphics", hcl(fmt.Sprintf("{ type = %q }", graphics))), attr("shutdown", hcl(`{ timeout = "5s" }`)))
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: func(s *terraform.State) error {
			err := acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)})(s)
			if nvram == "" {
				return errors.Join(err, fmt.Errorf("no nvram path was seen"))
			}
			if _, serr := os.Stat(nvram); !errors.Is(serr, os.ErrNotExist) {
				err = errors.Join(err, fmt.Errorf("nvram %s left behind after destroy (stat: %v)", nvram, serr))
			}
			return err
		},
		Steps: []resource.TestStep{{
			Config:           config(true, "none"),
			ConfigPlanChecks: acctest.Plans(),
			ConfigStateChecks: acctest.State(domRes,
				"firmware", "uefi",
				// libvirt expands q35 to pc-q35-<version>: not drift (acctest.Plans()).
				"os.machine", "q35",
				"state", "running",
				"console_url", "",
			),
			Check: func(*terraform.State) error {
				live, err := acctest.InspectDomain(t, name)
				if err != nil {
					return err
				}
				if live.Live.OS == nil || live.Live.OS.NVRam == nil || live.Live.OS.NVRam.NVRam == "" {
					return fmt.Errorf("running UEFI domain has no nvram in its live XML")
				}
				nvram = live.Live.OS.NVRam.NVRam
				if _, err := os.Stat(nvram); err != nil {
					return fmt.Errorf("nvram of the running domain: %w", err)
				}
				return nil
			},
		}, {
			// Powered off behind Terraform's back: the plan starts it again.
			PreConfig:         func() { acctest.ForceOff(t, name) },
			Config:            config(true, "none"),
			ConfigPlanChecks:  acctest.Updates(domRes, "none", acctest.PlanIs(domRes, "running", true)),
			ConfigStateChecks: acctest.State(domRes, "state", "running"),
		}, {
			// A device change on a running domain: rewritten and restarted, as planned.
			Config:           config(true, "spice"),
			ConfigPlanChecks: acctest.Updates(domRes, "restart"),
			ConfigStateChecks: acctest.State(domRes,
				"console_url", regexp.MustCompile(`^spice://127\.0\.0\.1:59\d\d$`),
				"state", "running",
			),
		}, {
			// running = false: shutdown request, forced off after shutdown.timeout (the
			// firmware alone does not act on the power button).
			Config:           config(false, "spice"),
			ConfigPlanChecks: acctest.Plans(),
			ConfigStateChecks: acctest.State(domRes,
				"state", "shutoff",
				"running", false,
			),
		}},
	})
}
