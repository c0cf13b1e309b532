package provider_test

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// The daemon drops the provider's live connections between two runs of the same
// config: the provider re-dials and the second run succeeds, with nothing to change.
func TestAccProvider_reconnectsAfterDrop(t *testing.T) {
	config := acctest.ProviderBlock("") + `data "libvirt_host" "this" {}`
	dropped := 0
	acctest.RunSerial(t, resource.TestCase{
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig:         func() { dropped = acctest.DropDaemonClients(t) },
				Config:            config,
				ConfigStateChecks: acctest.State("data.libvirt_host.this", "hypervisor_type", "QEMU"),
				Check: resource.ComposeTestCheckFunc(func(*terraform.State) error {
					if dropped == 0 {
						return fmt.Errorf("no live provider connection was dropped: the test proved nothing")
					}
					return nil
				},
					// Read again after the drop: what libvirt says when asked directly.
					hostMatches(acctest.URI())),
			},
		},
	})
}

// qemu+ssh through a real OpenSSH server, configured the way users do: key and
// known_hosts content in the provider block.
func TestAccProvider_ssh(t *testing.T) {
	acctest.RequireAcc(t)
	sshd := acctest.StartSSHD(t)
	t.Setenv("HOME", t.TempDir())
	t.Setenv("SSH_AUTH_SOCK", "")
	sshConfig := func(knownHosts string) string {
		return providerAt(sshd.URI(), fmt.Sprintf("ssh {\n    private_key = <<-EOT\n%sEOT\n    known_hosts = %q\n  }", sshd.ClientKeyPEM, knownHosts)) +
			`data "libvirt_host" "this" {}`
	}
	acctest.RunSerial(t, resource.TestCase{
		Steps: []resource.TestStep{
			{
				Config: sshConfig(sshd.KnownHostsLine),
				ConfigStateChecks: acctest.State("data.libvirt_host.this",
					"uri", sshd.URI(),
					"hypervisor_type", "QEMU",
				),
				// Through the tunnel, the test host's own daemon: its facts as it gives them
				// on its local socket.
				Check: hostMatches(acctest.URI()),
			},
			{
				// A known_hosts that names another key for this host: hard error, with the
				// fingerprint the host offered.
				Config:      sshConfig(acctest.NewHostKeyLine(t, fmt.Sprintf("127.0.0.1:%d", sshd.Port))),
				ExpectError: regexp.MustCompile(`(?s)ssh host key verification failed for 127\.0\.0\.1:\d+.*SHA256:`),
			},
		},
	})
}

// qemu+tcp: the host's facts and a volume made through the tcp transport are what the
// daemon shows on its local socket.
func TestAccProvider_tcp(t *testing.T) {
	uri := acctest.Env("LIBVIRT_TEST_TCP_URI", "qemu+tcp://127.0.0.1/system")
	name := acctest.RandomName("tcpvol")
	acctest.RunSerial(t, resource.TestCase{
		CheckDestroy: acctest.VolumesGone(name),
		Steps: []resource.TestStep{{
			Config:            providerAt(uri) + `data "libvirt_host" "this" {}` + volumeHCL("v", name, attr("capacity_bytes", 1048576)),
			ConfigStateChecks: acctest.State("data.libvirt_host.this", "uri", uri),
			Check: resource.ComposeTestCheckFunc(
				hostMatches(acctest.URI()),
				acctest.CheckVolume(t, acctest.Pool(), name, func(v *libvirt.VolumeInfo) error {
					if v.Capacity != 1048576 {
						return fmt.Errorf("volume %s made over tcp has %d bytes on the host, want 1048576", name, v.Capacity)
					}
					return nil
				}),
			),
		}},
	})
}
