package provider_test

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// freePort is a TCP port on 127.0.0.1 nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// The must-show: a TCP serial console and its log_file carry the guest's boot
// output. The test (in libvirtd's network namespace) connects to the port QEMU listens
// on, reads the boot script's lines, and runs a command in the root shell the guest
// keeps on ttyS0; the log file holds the boot output from the first line on.
func TestAccDomainChardev_tcpSerialBooted(t *testing.T) {
	name, disk := acctest.DomainDisk(t, "chardev")
	port, logFile := freePort(t), filepath.Join(t.TempDir(), "serial.log")
	config := acctest.ProviderBlock("") + resourceHCL("libvirt_domain", "test", attr("name", name), attr("vcpu", 1), attr("memory_mib", 256),
		`graphics = { type = "none" }`, attr("qemu_agent", false), blockHCL("disk", attr("volume_id", disk)),
		devicesHCL("serial", objHCL(attr("type", "tcp"), attr("host", "127.0.0.1"), attr("port", port), attr("mode", "bind"), attr("log_file", logFile))))
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{{
			Config:           config,
			ConfigPlanChecks: acctest.Plans(),
			ConfigStateChecks: acctest.State(domRes, "devices.serial", knownvalue.ListSizeExact(1), "devices.serial.0.target_type", nil,
				"devices.console", nil, "devices.channel", nil),
			Check: acctest.HostCheck(func() error {
				// A loaded 2-core host boots the guest in 15 to 75 s under TCG.
				if err := serialShell(port, 2*time.Minute); err != nil {
					return err
				}
				b, err := os.ReadFile(logFile)
				if err != nil {
					return fmt.Errorf("log_file: %w", err)
				}
				if !strings.Contains(string(b), "tinyguest: [") || !strings.Contains(string(b), "modules loaded") {
					return fmt.Errorf("log_file %s lacks the boot script's first lines:\n%s", logFile, b)
				}
				return nil
			}),
		}},
	})
}

// serialShell reads the serial port on 127.0.0.1:port: it must carry the boot script's
// lines up to its last (TINYGUEST READY), and then the root shell the guest keeps on
// ttyS0 must answer an echo (asked every 2 s until it does).
func serialShell(port int, timeout time.Duration) error {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 5*time.Second)
	if err != nil {
		return fmt.Errorf("connect to the TCP serial: %w", err)
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(timeout)); err != nil {
		return err
	}
	ready, done := make(chan struct{}), make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-done:
			return
		case <-ready:
		}
		for tick := time.NewTicker(2 * time.Second); ; {
			_, _ = c.Write([]byte("echo chardev-$((6*7))\n"))
			select {
			case <-done:
				tick.Stop()
				return
			case <-tick.C:
			}
		}
	}()
	var seen strings.Builder
	r := bufio.NewReader(c)
	for isReady := false; ; {
		line, err := r.ReadString('\n')
		seen.WriteString(line)
		switch {
		case isReady && strings.Contains(line, "chardev-42"):
			return nil
		case !isReady && strings.Contains(line, "TINYGUEST READY") && strings.Contains(seen.String(), "tinyguest: ["):
			isReady = true
			close(ready)
		}
		if err != nil {
			return fmt.Errorf("TCP serial: %w; read so far:\n%s", err, seen.String())
		}
	}
}

// objHCL is an object `{ a = 1, b = "x" }` of attr lines.
func objHCL(attrs ...string) string { return "{ " + strings.Join(attrs, ", ") + " }" }

// devicesHCL is `devices = { kind = [objs...], ... }` for pairs of a kind and its one
// object (a kind named twice gets both, in order).
func devicesHCL(kindsAndObjs ...string) string {
	var order []string
	lists := map[string][]string{}
	for i := 0; i+1 < len(kindsAndObjs); i += 2 {
		k := kindsAndObjs[i]
		if lists[k] == nil {
			order = append(order, k)
		}
		lists[k] = append(lists[k], kindsAndObjs[i+1])
	}
	var lines []string
	for _, k := range order {
		lines = append(lines, fmt.Sprintf("    %s = [\n      %s,\n    ]", k, strings.Join(lists[k], ",\n      ")))
	}
	return "devices = {\n" + strings.Join(lines, "\n") + "\n  }"
}

// everyChardev is one of each kind: a unix, a file and a null serial port, a virtio
// console and a named virtio channel.
func everyChardev(dir string) string {
	return devicesHCL(
		"serial", objHCL(attr("type", "unix"), attr("path", dir+"/s0.sock"), attr("log_file", dir+"/s0.log")),
		"serial", objHCL(attr("type", "file"), attr("path", dir+"/s1.out")),
		"serial", objHCL(attr("type", "null")),
		"console", objHCL(attr("type", "pty"), attr("target_type", "virtio")),
		"channel", objHCL(attr("type", "unix"), attr("path", dir+"/c.sock"), attr("mode", "bind"), attr("target_name", "org.example.port.0")),
	)
}

func chardevConfig(name, blocks string) string {
	return acctest.ProviderBlock("") + fmt.Sprintf("\nresource \"libvirt_domain\" \"test\" {\n  name = %q\n  %s\n  %s\n}\n", name, idleDomain, blocks)
}

// Define-only: every kind at once reads back as written (libvirt's target models and
// port numbers, the console mirroring serial 0 and the virtio-serial controller are not
// drift); an import writes the same; removing them takes the domain back to the default
// pty serial, and the group to null.
func TestAccDomainChardev_defineOnly(t *testing.T) {
	acctest.RequireAcc(t)
	name, dir := acctest.RandomName("chardev"), "/tmp/"+acctest.RandomName("chardev")
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{
				Config:           chardevConfig(name, everyChardev(dir)),
				ConfigPlanChecks: acctest.Plans(),
				Check: guestDevices(t, name, func(d *libvirtxml.DomainDeviceList) error {
					switch s := d.Serials; {
					case len(s) != 3 || s[0].Source.UNIX == nil || s[0].Source.UNIX.Path != dir+"/s0.sock" || s[0].Log == nil ||
						s[1].Source.File == nil || s[2].Source.Null == nil:
						return fmt.Errorf("serials: %+v", s)
					case len(d.Consoles) != 2 || d.Consoles[1].Target.Type != "virtio" || d.Consoles[1].Source.Pty == nil:
						return fmt.Errorf("consoles: %+v", d.Consoles)
					case len(d.Channels) != 1 || d.Channels[0].Target.VirtIO.Name != "org.example.port.0":
						return fmt.Errorf("channels: %+v", d.Channels)
					}
					return nil
				}),
				ConfigStateChecks: acctest.State(domRes, "devices.serial", knownvalue.ListSizeExact(3), "devices.serial.0.target_type", nil,
					"devices.serial.0.mode", nil, "devices.console.0.target_type", "virtio", "devices.video", nil),
			},
			{Config: chardevConfig(name, everyChardev(dir)), ConfigPlanChecks: acctest.Plans(acctest.NoChange())},
			{
				// The console's target_type and the unix channel's mode are written out as
				// libvirt's defaults (virtio, bind): the import leaves them out.
				ResourceName: domRes, ImportState: true, ImportStateVerify: true, ImportStateId: name,
				ImportStateVerifyIgnore: []string{"timeouts", "devices.console.0.target_type", "devices.channel.0.mode"},
			},
			{
				Config:            chardevConfig(name, ""),
				ConfigPlanChecks:  acctest.Updates(domRes, "definition"),
				ConfigStateChecks: acctest.State(domRes, "devices", nil),
				Check: guestDevices(t, name, func(d *libvirtxml.DomainDeviceList) error {
					if len(d.Serials) != 1 || d.Serials[0].Source.Pty == nil || len(d.Consoles) != 1 || d.Consoles[0].Source.Pty == nil ||
						len(d.Channels) != 0 {
						return fmt.Errorf("not back to the default: serials %+v consoles %+v channels %+v", d.Serials, d.Consoles, d.Channels)
					}
					return nil
				}),
			},
			{Config: chardevConfig(name, ""), ConfigPlanChecks: acctest.Plans(acctest.NoChange())},
		},
	})
}

// A domain virsh defined with such character devices imports with a generated
// configuration that plans clean; libvirt's own mirror console is not an entry. A unix
// channel without a path (libvirt places the socket at start) is one libvirt accepts (#25).
func TestAccDomainChardev_importDefined(t *testing.T) {
	acctest.RequireAcc(t)
	dir := "/tmp/" + acctest.RandomName("chardev")
	virshDefinedPlansClean(t, "chardev", `  <os><type arch='x86_64'>hvm</type></os>
  <devices>
    <serial type='unix'><source mode='connect' path='`+dir+`/s0.sock'/><log file='`+dir+`/s0.log'/></serial>
    <serial type='tcp'><source mode='bind' host='127.0.0.1' service='4555'/><protocol type='raw'/></serial>
    <console type='pty'><target type='virtio'/></console>
    <channel type='unix'><source mode='bind' path='`+dir+`/c.sock'/><target type='virtio' name='org.example.port.0'/></channel>
    <channel type='unix'><source mode='bind'/><target type='virtio' name='org.example.port.1'/></channel>
  </devices>`, `devices = {`, `"connect"`, `4555`, `"org.example.port.0"`, `"org.example.port.1"`, `"tcp"`)
}
