package provider_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// Bad input fails at plan time with a message naming the attribute and the fix. No
// daemon is needed: validation runs before the provider talks to libvirt.
func TestDomain_validation(t *testing.T) {
	provider := `
terraform {
  required_providers {
    libvirt = { source = "kvmforge/libvirt" }
  }
}
provider "libvirt" {
  uri = "test:///default"
}
`
	dom := func(body string) string {
		return provider + `resource "libvirt_domain" "test" {
` + body + `
}
`
	}
	base := "name = \"tfacc-v\"\nvcpu = 1\nmemory_mib = 256\n"
	// Terraform wraps long messages: match any whitespace between words.
	re := func(s string) *regexp.Regexp {
		return regexp.MustCompile("(?s)" + strings.ReplaceAll(s, " ", `\s+`))
	}
	cases := []struct {
		name, config string
		want         *regexp.Regexp
	}{
		{"name with slash", dom(`name = "a/b"` + "\nvcpu = 1\nmemory_mib = 256"), re(`name.*must be a libvirt domain name`)},
		{"mac", dom(base + `network_interface {
  network = "default"
  mac = "52:54:00:zz:00:01"
}`), re(`mac.*must be a MAC address such as 52:54:00:12:34:56`)},
		{"vcpu over max", dom("name = \"tfacc-v\"\nvcpu = 4\nmax_vcpu = 2\nmemory_mib = 256"), re(`max_vcpu below vcpu.*max_vcpu = 2 is below vcpu = 4.*set it to 4 or more`)},
		{"memory over max", dom("name = \"tfacc-v\"\nvcpu = 1\nmemory_mib = 512\nmax_memory_mib = 256"), re(`max_memory_mib below memory_mib.*max_memory_mib = 256 is below memory_mib = 512.*set it to 512 or more`)},
		{"disk with two sources", dom(base + `disk {
  volume_id = "default/a.qcow2"
  path = "/var/lib/a.qcow2"
}`), re(`Invalid Attribute Combination.*path`)},
		{"disk without source", dom(base + `disk {
  device = "cdrom"
}`), re(`Invalid Attribute Combination.*volume_id`)},
		{"nic on network and bridge", dom(base + `network_interface {
  network = "default"
  bridge = "br0"
}`), re(`Invalid Attribute Combination.*bridge`)},
		{"wait source", dom(base + `network_interface {
  network = "default"
  wait_for_ip {
    source = "dhcp"
  }
}`), re(`source.*value must be one of`)},
		{"lease on a bridge", dom(base + `network_interface {
  bridge = "br0"
  wait_for_ip {
    source = "lease"
  }
}`), re(`DHCP leases need a libvirt network.*source = "agent"`)},
		{"agent without channel", dom(base + `qemu_agent = false
network_interface {
  network = "default"
  wait_for_ip {
    source = "agent"
  }
}`), re(`The guest agent is disabled`)},
		{"cpu_model without custom", dom(base + `cpu_mode = "host-model"
cpu_model = "Haswell"`), re(`cpu_model needs cpu_mode = "custom"`)},
		{"cpu_mode", dom(base + `cpu_mode = "host"`), re(`cpu_mode.*value must be one of`)},
		{"firmware", dom(base + `firmware = "efi"`), re(`firmware.*value must be one of.*"uefi"`)},
		{"shutdown timeout", dom(base + `shutdown = {
  timeout = "soon"
}`), re(`Invalid duration.*"soon" is not a duration`)},
		{"graphics listen", dom(base + `graphics = {
  listen = "localhost"
}`), re(`Invalid IP address.*"localhost"`)},
		{"same target twice", dom(base + `disk {
  path = "/a"
  target = "vda"
}
disk {
  path = "/b"
  target = "vda"
}`), re(`Disk target used twice`)},
		{"data source needs name or uuid", provider + `data "libvirt_domain" "x" {}`, re(`Exactly one of these attributes must be configured: \[name,uuid\]`)},
	}
	steps := make([]resource.TestStep, 0, len(cases))
	for _, c := range cases {
		steps = append(steps, resource.TestStep{Config: c.config, PlanOnly: true, ExpectError: c.want})
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps:                    steps,
	})
}
