package provider_test

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/capi"
)

// badInputCases is the catalogue of TestAccBadInputCatalogue (its table is in
// bad_input_acc_test.go).
func badInputCases() []badInputCase {
	// dom is libvirt_domain.d: a stopped domain NAME of 1 vCPU and 64 MiB, with lines
	// (attr lines replace these).
	dom := func(lines ...string) string {
		return resourceHCL("libvirt_domain", "d", withDefaults([]string{attr("name", "NAME"), attr("vcpu", 1),
			attr("memory_mib", 64), attr("running", false)}, lines)...)
	}
	// network is libvirt_network.n named NAME, with lines.
	network := func(lines ...string) string {
		return resourceHCL("libvirt_network", "n", withDefaults([]string{attr("name", "NAME")}, lines)...)
	}
	// vol is libvirt_volume.v named NAME in POOL, with lines.
	vol := func(lines ...string) string {
		return resourceHCL("libvirt_volume", "v", withDefaults([]string{attr("name", "NAME"), attr("pool", "POOL")}, lines)...)
	}
	// pool is libvirt_pool.p: a dir pool NAME at /tmp/NAME, with lines.
	pool := func(lines ...string) string {
		return resourceHCL("libvirt_pool", "p", withDefaults([]string{attr("name", "NAME"), attr("type", "dir"),
			attr("target_path", "/tmp/NAME")}, lines)...)
	}
	// reservation is libvirt_dhcp_reservation label of mac to ip on network.
	reservation := func(label, network, mac, ip string) string {
		return resourceHCL("libvirt_dhcp_reservation", label, attr("network", network), attr("mac", mac), attr("ip", ip))
	}
	// snapshot is libvirt_snapshot.s, with lines.
	snapshot := func(lines ...string) string { return resourceHCL("libvirt_snapshot", "s", lines...) }
	// seed is libvirt_cloudinit_iso.c named NAME in POOL, instance i-1, with lines.
	seed := func(lines ...string) string {
		return resourceHCL("libvirt_cloudinit_iso", "c", append([]string{attr("name", "NAME"), attr("pool", "POOL"), attr("instance_id", "i-1")}, lines...)...)
	}
	const host = "\ndata \"libvirt_host\" \"h\" {}\n"
	macVars := func(_ *testing.T, name string) map[string]string {
		return map[string]string{"MAC": capi.MAC(name)}
	}
	macGone := func(network string) func(t *testing.T, name string, vars map[string]string) error {
		return func(t *testing.T, _ string, vars map[string]string) error {
			n := network
			if n == "" {
				n = vars["RESNET"]
			}
			return noDHCPEntry(t, n, vars["MAC"])
		}
	}
	return []badInputCase{
		{name: "domain_name", phase: "plan",
			bad: dom(attr("name", "NAME/x")), want: `with libvirt_domain.d,.*Attribute name must be a libvirt domain name: .* without \x27/\x27 or whitespace, got: NAME/x`},
		{name: "volume_name", phase: "plan",
			bad: vol(attr("name", "NAME/x"), attr("capacity_bytes", 1048576)), want: `Invalid volume name with libvirt_volume.v,.*name "NAME/x" contains \x27/\x27: libvirt names cannot.*Use e.g. "NAME-x"`},
		{name: "network_name", phase: "plan",
			bad: network(attr("name", "-NAME"), attr("active", false)), want: `with libvirt_network.n,.*Attribute name must start with a letter or digit.*got: -NAME`},
		{name: "pool_name", phase: "plan",
			bad: pool(attr("name", "NAME x")), want: `with libvirt_pool.p,.*Attribute name must start with a letter or digit.*got: NAME x`},
		{name: "domain_mac", phase: "plan",
			bad: dom(blockHCL("network_interface", attr("network", "NET"), attr("mac", "52:54:00:zz:00:01"))), want: `with libvirt_domain.d,.*network_interface\[0\].mac must be a MAC address such as 52:54:00:12:34:56, got: 52:54:00:zz:00:01`},
		{name: "cpu_topology_product", phase: "plan", bad: dom("cpu_topology = { sockets = 2, cores = 2, threads = 1 }"),
			want: `Invalid cpu_topology.*with libvirt_domain.d,.*cpu_topology: sockets × dies × cores × threads = 2 × 1 × 2 × 1 = 4, but the domain has 1 vCPUs .*make the product 1`},
		{name: "cpu_features_policy", phase: "plan", bad: dom(attr("cpu_mode", "host-model"), `cpu_features = { vmx = "maybe" }`),
			want: `with libvirt_domain.d,.*cpu_features.*value must be one of: \["require" "disable" "optional" "force" "forbid"\], got: "maybe"`},
		{name: "cpu_features_model", phase: "plan", bad: dom(`cpu_features = { vmx = "disable" }`),
			want: `Invalid cpu_features.*cpu_features change a CPU model, and the domain names none: set cpu_mode = "host-model"`},
		{name: "numa_cell_cpus", phase: "plan", bad: dom(attr("vcpu", 2), blockHCL("numa_cell", attr("id", 0), attr("cpus", "0"), attr("memory_mib", 64))),
			want: `Invalid numa_cell.*numa_cell: vCPU 1 is in no cell; the cells' cpus must cover vCPUs 0 to 1`},
		{name: "numa_cell_memory", phase: "plan", bad: dom(blockHCL("numa_cell", attr("id", 0), attr("cpus", "0"), attr("memory_mib", 32))),
			want: `Invalid numa_cell.*the cells' memory_mib add up to 32, but the domain has 64 MiB .*make them add up to 64`},
		{name: "cpuset_syntax", phase: "plan", bad: dom(`cpu_pinning = { "0" = "0-x" }`),
			want: `with libvirt_domain.d,.*cpu_pinning.*must be a cpuset such as 0-1,4 \(numbers and ranges, \^N excludes one\), got: 0-x`},
		{name: "cpu_pinning_vcpu", phase: "plan", bad: dom(`cpu_pinning = { "3" = "0" }`),
			want: `Invalid cpu_pinning.*cpu_pinning: vCPU 3 does not exist: the domain's vCPUs are 0 to 0`},
		{name: "hugepage_size_needs_hugepages", phase: "plan", bad: dom("memory_backing = { hugepage_size_kib = 2048 }"),
			want: `Invalid memory_backing.*memory_backing: hugepage_size_kib = 2048 needs hugepages = true`},
		{name: "hugepages_anonymous", phase: "plan", bad: dom(`memory_backing = { hugepages = true, source = "anonymous" }`),
			want: `Invalid memory_backing.*hugepages cannot come from source = anonymous; use memfd or file`},
		{name: "memory_backing_private_virtiofs", phase: "plan",
			bad:  dom(`memory_backing = { access = "private" }`, fsBlock(attr("source", "/srv"), attr("target", "share"))),
			want: `Invalid memory_backing.*access = private, but the virtiofs share "share" needs the guest's memory shared`},
		{name: "filesystem_relative_source", phase: "plan",
			bad: dom(fsBlock(attr("source", "srv/share"), attr("target", "share"))), want: `with libvirt_domain.d,.*filesystem\[0\].source must be an absolute path on the host, got: srv/share`},
		{name: "filesystem_tag_twice", phase: "plan",
			bad:  dom(fsBlock(attr("source", "/srv/a"), attr("target", "t")), fsBlock(attr("source", "/srv/b"), attr("target", "t"), attr("driver", "9p"))),
			want: `Filesystem target used twice.*with libvirt_domain.d,.*filesystem 0 and filesystem 1 both use the mount tag "t"; give each share its own`},
		{name: "filesystem_access_virtiofs", phase: "plan",
			bad:  dom(fsBlock(attr("source", "/srv/a"), attr("target", "t"), attr("access_mode", "mapped"))),
			want: `access_mode is a 9p setting.*with libvirt_domain.d,.*filesystem 0 \(t\) uses driver "virtiofs", which always passes file ownership through. Remove access_mode, or set driver = "9p"`},
		{name: "filesystem_virtiofs_read_only", phase: "apply",
			bad:  dom(fsBlock(attr("source", "/tmp"), attr("target", "t"), attr("read_only", true))),
			want: `libvirt_domain.d,.*virtiofs does not yet support read-only mode`},
		{name: "serial_tcp_no_host", phase: "plan",
			bad: dom(blockHCL("serial", attr("type", "tcp"), attr("port", 4555))), want: `Invalid serial, console or channel block.*with libvirt_domain.d,.*serial\[0\]: type tcp needs host.*type tcp needs mode \("bind" to listen, "connect" to dial\)`},
		{name: "serial_pty_with_path", phase: "plan",
			bad: dom(blockHCL("serial", attr("type", "pty"), attr("path", "/tmp/x"))), want: `serial\[0\]: type pty takes no path; remove it`},
		{name: "serial_log_relative", phase: "plan",
			bad: dom(blockHCL("serial", attr("type", "null"), attr("log_file", "serial.log"))), want: `serial\[0\]: log_file "serial.log" must be an absolute path`},
		{name: "console_unix_no_path", phase: "plan",
			bad: dom(blockHCL("console", attr("type", "unix"))), want: `console\[0\]: type unix needs path \(absolute\)`},
		{name: "channel_agent_name", phase: "plan",
			bad:  dom(blockHCL("channel", attr("type", "unix"), attr("path", "/tmp/a.sock"), attr("target_name", "org.qemu.guest_agent.0"))),
			want: `channel\[0\]: target_name org.qemu.guest_agent.0 is the guest-agent channel, which qemu_agent = true \(true here\) adds itself: remove this channel block and use qemu_agent`},
		{name: "video_accel3d_qxl", phase: "plan",
			bad: dom(attr("video", hcl(`{ model = "qxl", accel3d = true }`))), want: `accel3d needs a virtio video.*with libvirt_domain.d,.*video: model "qxl" has no 3D acceleration; set model = "virtio"`},
		{name: "rng_period_without_bytes", phase: "plan",
			bad: dom(attr("rng", hcl(`{ rate_period_ms = 1000 }`))), want: `rate_period_ms needs rate_bytes.*with libvirt_domain.d,.*rng: rate_period_ms is the period of a rate limit; set rate_bytes`},
		{name: "watchdog_action", phase: "plan",
			bad: dom(attr("watchdog", hcl(`{ model = "i6300esb", action = "explode" }`))), want: `with libvirt_domain.d,.*watchdog.action value must be one of:.*"poweroff"`},
		{name: "vsock_cid_reserved", phase: "plan",
			bad: dom(attr("vsock", hcl(`{ cid = 2 }`))), want: `with libvirt_domain.d,.*vsock.cid value must be at least 3, got: 2`},
		{name: "memballoon_none_stats", phase: "plan",
			bad: dom(attr("memballoon", hcl(`{ model = "none", stats_period_sec = 5 }`))), want: `memballoon model "none" has no settings.*with libvirt_domain.d,.*remove stats_period_sec`},
		{name: "input_tablet_ps2", phase: "plan",
			bad: dom(blockHCL("input", attr("type", "tablet"), attr("bus", "ps2"))), want: `A tablet cannot be on ps2.*with libvirt_domain.d,.*input: type = "tablet" needs bus = "usb" or "virtio"`},
		{name: "disk_network_auth_http", phase: "plan",
			bad: dom(networkDisk(attr("protocol", "http"), attr("name", "/x.iso"), `hosts    = [{ name = "h" }]`,
				`auth     = { username = "u", secret_id = "0b8e7f2c-1d3a-4b5c-9e6f-7a8b9c0d1e2f" }`)),
			want: `Invalid network_source.*with libvirt_domain.d,.*libvirt_domain NAME, disk 0: http disks take no auth in libvirt \(only rbd and iscsi do\)`},
		{name: "disk_network_two_hosts", phase: "plan",
			bad:  dom(networkDisk(attr("protocol", "nbd"), `hosts    = [{ name = "a" }, { name = "b" }]`)),
			want: `Invalid network_source.*disk 0: only rbd takes more than one host \(nbd takes one\)`},
		{name: "disk_source_twice", phase: "plan",
			bad:  dom("disk {\n    path = \"/tmp/x.raw\"\n    network_source = { protocol = \"nbd\", hosts = [{ name = \"a\" }] }\n  }"),
			want: `A disk has more than one source.*with libvirt_domain.d,.*libvirt_domain NAME: disk 0 sets path and network_source: keep one of them`},
		{name: "secret_ceph_key", phase: "plan",
			bad:  resourceHCL("libvirt_secret", "s", attr("usage_type", "ceph"), attr("usage_name", "NAME"), attr("value", "not base64!")),
			want: `Invalid ceph key.*with libvirt_secret.s,.*libvirt_secret for NAME: a ceph secret\x27s value is the key as .ceph auth get-key. prints it \(base64\)`},
		{name: "secret_usage_type", phase: "plan",
			bad:  resourceHCL("libvirt_secret", "s", attr("usage_type", "rbd"), attr("usage_name", "NAME")),
			want: `with libvirt_secret.s,.*Attribute usage_type value must be one of: \["volume" "ceph" "iscsi" "tls" "vtpm"\], got: "rbd"`},
		{name: "import_secret_id", phase: "import", importResource: "libvirt_secret.s", importID: "NAME",
			bad:  resourceHCL("libvirt_secret", "s", attr("usage_type", "tls"), attr("usage_name", "NAME")),
			want: `Invalid import id.*expected the secret\x27s UUID \(virsh secret-list\), got "NAME"`},
		{name: "reservation_mac", phase: "plan",
			bad: reservation("r", "NET", "52:54:00:12:34", "192.168.122.250"), want: `with libvirt_dhcp_reservation.r,.*Attribute mac must be a MAC address of six colon-separated hex pairs, e.g. 52:54:00:12:34:56, got: 52:54:00:12:34`},
		{name: "network_host_mac", phase: "plan",
			bad: network(attr("active", false), attr("addresses", hcl(`["10.251.7.0/24"]`)),
				`dhcp { hosts = [{ mac = "52-54-00-12-34-56", ip = "10.251.7.20" }] }`), want: `Invalid network dhcp with libvirt_network.n,.*hosts\[0\]: mac "52-54-00-12-34-56" must be six lower-case hex pairs separated by \x27:\x27, e.g. 52:54:00:12:34:56`},
		{name: "reservation_ip_outside", phase: "plan", vars: macVars, gone: macGone(acctest.Network()),
			bad: reservation("r", "NET", "MAC", "10.99.0.5"), want: `Invalid DHCP reservation MAC on network NET with libvirt_dhcp_reservation.r,.*ip 10.99.0.5 is outside network NET\x27s subnets \(192.168.122.0/24\): choose an address inside one of them`},
		{name: "reservation_clash", phase: "plan",
			vars: func(t *testing.T, name string) map[string]string {
				n := acctest.CreateNetwork(t, false)
				return map[string]string{"RESNET": n.Name, "IP": n.Addr(50), "MAC": capi.MAC(name), "OTHERMAC": capi.MAC(name + "-0")}
			},
			gone:  macGone(""),
			setup: reservation("first", "RESNET", "OTHERMAC", "IP"),
			bad:   reservation("r", "RESNET", "MAC", "IP"), want: `Invalid DHCP reservation MAC on network RESNET with libvirt_dhcp_reservation.r,.*ip IP on network RESNET is already reserved for \S+ OTHERMAC: choose another address`},
		{name: "volume_negative_capacity", phase: "plan",
			bad: vol(attr("capacity_bytes", -1)), want: `with libvirt_volume.v,.*Attribute capacity_bytes value must be at least 1, got: -1`},
		{name: "volume_shrink", phase: "plan", update: true,
			setup: vol(attr("capacity_bytes", 2097152)), bad: vol(attr("capacity_bytes", 1048576)), want: `Volume cannot shrink with libvirt_volume.v,.*libvirt_volume POOL/NAME is 2097152 bytes; capacity_bytes = 1048576 would shrink it.*Set capacity_bytes to 2097152 or more, or replace the volume`},
		{name: "volume_sources_url_file", phase: "plan",
			bad: vol(attr("source_url", "http://127.0.0.1/a.qcow2"), attr("source_file", "/etc/hostname")), want: `Conflicting volume sources with libvirt_volume.v,.*source_url and source_file are all set.*Keep one of source_url, source_file, backing_volume or clone_from and remove the others`},
		{name: "volume_sources_backing_clone", phase: "plan",
			bad: vol(attr("backing_volume", "POOL/base.qcow2"), attr("clone_from", "POOL/base.qcow2")), want: `Conflicting volume sources with libvirt_volume.v,.*backing_volume and clone_from are all set.*Keep one of.*remove the others`},
		{name: "volume_missing_pool", phase: "apply",
			bad: vol(attr("pool", "NAME-nopool"), attr("capacity_bytes", 1048576)), want: `Unable to create volume NAME-nopool/NAME with libvirt_volume.v,.*no storage pool with matching name \x27NAME-nopool\x27.*Check that pool "NAME-nopool" exists \(create it with libvirt_pool`},
		{name: "domain_missing_network", phase: "apply",
			bad: dom(blockHCL("network_interface", attr("network", "NAME-nonet"))), want: `Unable to create libvirt domain NAME with libvirt_domain.d,.*network_interface 0: network "NAME-nonet" does not exist on qemu:///system: create it \(libvirt_network\) or name an existing network`},
		{name: "reservation_missing_network", phase: "apply", vars: macVars,
			bad: reservation("r", "NAME-nonet", "MAC", "10.99.0.5"), want: `Unable to create DHCP reservation MAC on network NAME-nonet with libvirt_dhcp_reservation.r,.*Network "NAME-nonet" does not exist on qemu:///system`},
		{name: "volume_missing_backing", phase: "apply",
			bad: vol(attr("backing_volume", "POOL/NAME-nobase.qcow2")), want: `Unable to create volume POOL/NAME with libvirt_volume.v,.*no storage vol with matching name \x27NAME-nobase.qcow2\x27.*backing_volume = "POOL/NAME-nobase.qcow2" names an existing volume`},
		{name: "snapshot_missing_domain", phase: "apply",
			bad: snapshot(attr("domain_id", "NAME-nodomain"), attr("name", "NAME")), want: `Unable to create snapshot NAME of domain NAME-nodomain with libvirt_snapshot.s,.*Domain "NAME-nodomain" does not exist on qemu:///system`},
		{name: "clone_missing_source", phase: "plan",
			bad: resourceHCL("libvirt_clone", "c", attr("source_domain_id", "NAME-nodomain"), attr("name", "NAME"),
				attr("mode", "linked"), attr("running", false)), want: `Unable to plan libvirt clone NAME with libvirt_clone.c,.*The source domain "NAME-nodomain" does not exist on qemu:///system`},
		{name: "uri_transport", phase: "plan",
			provider: providerAt("qemu+bogus://127.0.0.1/system"), bad: host, want: `Invalid libvirt URI.*"qemu\+bogus://127.0.0.1/system" uses transport "bogus", which this provider does not support: use unix, ssh, tcp or tls`},
		{name: "uri_query", phase: "plan",
			provider: providerAt("qemu:///system?sokket=/run/libvirt/libvirt-sock"), bad: host, want: `Invalid libvirt URI.*has unknown query parameter "sokket": supported are socket, keyfile, known_hosts, known_hosts_verify, no_verify, sshauth, pkipath and name`},
		{name: "uri_driver", phase: "plan",
			provider: providerAt("nosuch:///system"), bad: host, want: `Unable to read libvirt host nosuch:///system with data.libvirt_host.h,.*no connection driver available for nosuch:///system: the daemon has no "nosuch" driver.*use e.g. qemu:///system`},
		{name: "checksum_mismatch", phase: "apply",
			vars: func(t *testing.T, _ string) map[string]string {
				f := filepath.Join(t.TempDir(), "image.raw")
				if err := os.WriteFile(f, make([]byte, 1<<20), 0o600); err != nil {
					t.Fatal(err)
				}
				sum := sha256.Sum256([]byte("not the image"))
				return map[string]string{"FILE": f, "SUM": "sha256:" + hex.EncodeToString(sum[:])}
			},
			bad: vol(attr("format", "raw"), attr("source_file", "FILE"), attr("source_checksum", "SUM")), want: `Unable to create volume POOL/NAME with libvirt_volume.v,.*checksum mismatch: the source\x27s sha256 is [0-9a-f]{64}, source_checksum says [0-9a-f]{64} \(the half-made volume POOL/NAME was deleted\)`},
		{name: "volume_compression_unknown", phase: "plan",
			bad: vol(attr("source_url", "http://127.0.0.1/a.qcow2.lz4"), attr("source_compression", "lz4")), want: `with libvirt_volume.v,.*Attribute source_compression value must be one of: \["auto" "none" "gzip" "xz" "zstd" "bzip2"\], got: "lz4"`},
		{name: "volume_compression_backing", phase: "plan",
			bad: vol(attr("backing_volume", "POOL/base.qcow2"), attr("source_compression", "gzip")), want: `source_compression without an upload with libvirt_volume.v,.*set source_url or source_file, or remove source_compression \(backing_volume, clone_from and empty volumes have nothing to decompress\)`},
		{name: "volume_compression_clone", phase: "plan",
			bad: vol(attr("clone_from", "POOL/base.qcow2"), attr("source_compression", "auto")), want: `source_compression without an upload with libvirt_volume.v,.*remove source_compression`},
		{name: "volume_compression_empty", phase: "plan",
			bad: vol(attr("capacity_bytes", 1048576), attr("source_compression", "none")), want: `source_compression without an upload with libvirt_volume.v`},
		{name: "volume_compression_mismatch", phase: "plan", vars: plainFile("image.raw"),
			bad: vol(attr("format", "raw"), attr("source_file", "FILE"), attr("source_compression", "xz")), want: `source_compression does not match source_file with libvirt_volume.v,.*source_compression = "xz" but FILE is not compressed \(no gzip, xz, zstd or bzip2 magic bytes\): set source_compression = "none"`},
		{name: "volume_compression_misnamed", phase: "plan", vars: plainFile("image.raw.gz"),
			bad: vol(attr("format", "raw"), attr("source_file", "FILE")), want: `source_compression does not match source_file with libvirt_volume.v,.*the name of FILE says gzip but its content is not compressed.*set source_compression = "none" if it really is stored that way`},
		{name: "volume_permissions_mode", phase: "plan",
			bad: vol(attr("capacity_bytes", 1048576), "permissions = { mode = \"640\" }"), want: `with libvirt_volume.v,.*permissions.mode.*must be four octal digits starting with 0, e.g. "0640"`},
		{name: "volume_permissions_owner", phase: "plan",
			bad: vol(attr("capacity_bytes", 1048576), "permissions = { owner = -1 }"), want: `with libvirt_volume.v,.*permissions.owner value must be at least 0, got: -1`},
		{name: "volume_compression_url_mismatch", phase: "apply", vars: func(t *testing.T, _ string) map[string]string {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(make([]byte, 4096)) }))
			t.Cleanup(srv.Close)
			return map[string]string{"ADDR": srv.Listener.Addr().String()}
		},
			bad: vol(attr("format", "raw"), attr("source_url", "http://ADDR/image.raw.xz")), want: `Unable to create volume POOL/NAME with libvirt_volume.v,.*read the start of http://ADDR/image.raw.xz: the name of http://ADDR/image.raw.xz says xz but its content is not compressed`},
		{name: "url_unreachable", phase: "apply",
			vars: func(t *testing.T, _ string) map[string]string { return map[string]string{"ADDR": closedPort(t)} },
			bad:  vol(attr("source_url", "http://ADDR/image.qcow2")), want: `Unable to create volume POOL/NAME with libvirt_volume.v,.*download http://ADDR/image.qcow2: .*connection refused`},
		{name: "cloudinit_network_config", phase: "plan",
			bad: seed(attr("network_config", "version: 2\n  ethernets: [")), want: `Invalid YAML in network_config with libvirt_cloudinit_iso.c,.*network_config does not parse as YAML: .*check its indentation`},
		{name: "cloudinit_user_data", phase: "plan",
			bad: seed(attr("user_data", "#cloud-config\nusers: [\n")), want: `Invalid YAML in user_data with libvirt_cloudinit_iso.c,.*user_data starts with #cloud-config but does not parse as YAML.*fix the document`},
		{name: "max_vcpu_below", phase: "plan",
			bad: dom(attr("vcpu", 4), attr("max_vcpu", 2)), want: `max_vcpu below vcpu with libvirt_domain.d,.*libvirt_domain NAME: max_vcpu = 2 is below vcpu = 4.*set it to 4 or more, or remove it`},
		{name: "max_memory_below", phase: "plan",
			bad: dom(attr("memory_mib", 128), attr("max_memory_mib", 64)), want: `max_memory_mib below memory_mib with libvirt_domain.d,.*libvirt_domain NAME: max_memory_mib = 64 is below memory_mib = 128.*set it to 128 or more, or remove it`},
		{name: "machine_not_offered", phase: "plan",
			bad: dom(attr("machine", "virt")), want: `Machine type not offered by the host with libvirt_domain.d,.*libvirt_domain NAME: machine = "virt" is not a machine type host .* offers for x86_64 guests. Use one of .*q35.*or remove machine`},
		{name: "arch_not_offered", phase: "plan",
			bad: dom(attr("arch", "s390x")), want: `Architecture not offered by the host with libvirt_domain.d,.*libvirt_domain NAME: arch = "s390x", but host .* offers hvm guests of .*aarch64.*x86_64 only.*remove arch for the host's`},
		{name: "emulator_missing", phase: "plan",
			bad: dom(attr("emulator", "/usr/bin/qemu-system-nosuch")), want: `Emulator not offered by the host with libvirt_domain.d,.*libvirt_domain NAME: emulator = "/usr/bin/qemu-system-nosuch" is not an emulator host .* offers for x86_64 qemu domains.*No such file.*remove emulator`},
		{name: "domain_type_not_offered", phase: "plan", onlyWithoutKVM: true,
			bad: dom(attr("type", "kvm")), want: `Domain type not offered by the host with libvirt_domain.d,.*libvirt_domain NAME: type = "kvm", but host .* offers only qemu domains .*Set type = "qemu" or remove type`},
		{name: "vcpu_zero", phase: "plan",
			bad: dom(attr("vcpu", 0)), want: `with libvirt_domain.d,.*Attribute vcpu value must be between 1 and 4096, got: 0`},
		{name: "memory_zero", phase: "plan",
			bad: dom(attr("memory_mib", 0)), want: `with libvirt_domain.d,.*Attribute memory_mib value must be at least 16, got: 0`},
		{name: "wait_timeout", phase: "plan",
			bad: dom(blockHCL("network_interface", attr("network", "NET"), blockHCL("wait_for_ip", attr("timeout", "5 minutes")))), want: `Invalid duration with libvirt_domain.d,.*"5 minutes" is not a duration: use a Go duration such as 30s, 5m or 1h30m`},
		{name: "ready_nothing", phase: "plan",
			bad: dom(attr("wait_for_ready", hcl(`{ agent = false }`))), want: `Nothing to wait for with libvirt_domain.d,.*wait_for_ready with agent = false and no command waits for nothing`},
		{name: "ready_no_agent", phase: "plan",
			bad: dom(attr("qemu_agent", false), attr("wait_for_ready", hcl(`{ command = ["true"] }`))), want: `wait_for_ready needs the guest agent with libvirt_domain.d,.*qemu_agent = false leaves the domain without its channel`},
		{name: "ready_empty_command", phase: "plan",
			bad: dom(attr("wait_for_ready", hcl(`{ command = [] }`))), want: `with libvirt_domain.d,.*Attribute wait_for_ready.command list must contain at least 1 elements, got: 0`},
		{name: "console_lines", phase: "plan",
			bad: "\ndata \"libvirt_domain_console\" \"c\" {\n  domain_id = \"NAME\"\n  lines = 0\n}\n", want: `Attribute lines value must be between 1 and 1000, got: 0`},
		{name: "console_stopped", phase: "plan", setup: dom(),
			bad: "\ndata \"libvirt_domain_console\" \"c\" {\n  domain_id = libvirt_domain.d.id\n}\n", want: `Unable to read the console of domain .*domain .* is shutoff: only a running domain has console output to read; start it first`},
		{name: "nic_two_sources", phase: "plan",
			bad: dom(blockHCL("network_interface", attr("network", "NET"), attr("direct", hcl(`{ dev = "eth0" }`)))), want: `One source per network_interface with libvirt_domain.d,.*network_interface 0 needs exactly one of network, bridge and direct; it has direct and network: keep one`},
		{name: "nic_no_source", phase: "plan",
			bad: dom(blockHCL("network_interface", attr("model", "virtio"))), want: `One source per network_interface with libvirt_domain.d,.*network_interface 0 needs exactly one of network, bridge and direct; it has none: add one`},
		{name: "nic_queues_model", phase: "plan",
			bad: dom(blockHCL("network_interface", attr("network", "NET"), attr("model", "e1000"), attr("queues", 2))), want: `queues needs a virtio NIC with libvirt_domain.d,.*network_interface 0: queues needs model = "virtio", not "e1000"`},
		{name: "nic_link_state", phase: "plan",
			bad: dom(blockHCL("network_interface", attr("network", "NET"), attr("link_state", "off"))), want: `with libvirt_domain.d,.*Attribute network_interface\[0\].link_state value must be one of: \["up" "down"\], got: "off"`},
		{name: "nic_qbh_profile", phase: "plan",
			bad: dom(blockHCL("network_interface", attr("bridge", "br0"), attr("virtualport", hcl(`{ type = "802.1Qbh" }`)))), want: `Invalid virtualport with libvirt_domain.d,.*network_interface 0: virtualport type 802.1Qbh needs profile_id`},
		{name: "nic_boot_twice", phase: "plan",
			bad: dom(blockHCL("network_interface", attr("network", "NET"), attr("boot_order", 1)), blockHCL("network_interface", attr("network", "NET"), attr("boot_order", 1))), want: `Boot order used twice with libvirt_domain.d,.*network_interface 1: boot_order 1 is already used by network_interface 0`},
		{name: "nic_port_group_bridge", phase: "plan",
			bad: dom(blockHCL("network_interface", attr("bridge", "br0"), attr("port_group", "pg1"))), want: `with libvirt_domain.d,.*Attribute "network_interface\[0\].network" must be specified when "network_interface\[0\].port_group" is specified`},
		{name: "nic_missing_filter", phase: "plan",
			bad: dom(blockHCL("network_interface", attr("network", "NET"), attr("filter", hcl(`{ name = "NAME-nofilter" }`)))), want: `Unknown network_interface reference with libvirt_domain.d,.*network_interface 0: nwfilter "NAME-nofilter" does not exist on qemu:///system`},
		{name: "nic_missing_port_group", phase: "plan",
			bad: dom(blockHCL("network_interface", attr("network", "NET"), attr("port_group", "NAME-nopg"))), want: `Unknown network_interface reference with libvirt_domain.d,.*network_interface 0: network NET has no port group "NAME-nopg"`},
		{name: "graphics_type", phase: "plan",
			bad: dom(attr("graphics", hcl(`{ type = "rdp" }`))), want: `with libvirt_domain.d,.*Attribute graphics.type value must be one of: \["vnc" "spice" "none"\], got: "rdp"`},
		{name: "graphics_port_with_autoport", phase: "plan",
			bad: dom(attr("graphics", hcl(`{ type = "vnc", port = 5901, autoport = true }`))), want: `port with autoport.*with libvirt_domain.d,.*graphics sets port = 5901 and autoport = true`},
		{name: "graphics_websocket_spice", phase: "plan",
			bad: dom(attr("graphics", hcl(`{ type = "spice", websocket = -1 }`))), want: `websocket is for VNC only.*with libvirt_domain.d,.*graphics type = "spice": only a VNC console has a websocket`},
		{name: "graphics_keymap", phase: "plan",
			bad: dom(attr("graphics", hcl(`{ keymap = "english" }`))), want: `with libvirt_domain.d,.*graphics.keymap must be a QEMU keymap name`},
		{name: "graphics_two_passwords", phase: "plan",
			bad: dom(attr("graphics", hcl(`{ password = "a" }`)), attr("graphics_password_wo", "b"), attr("graphics_password_wo_version", 1)), want: `Two console passwords.*with libvirt_domain.d,.*graphics.password and graphics_password_wo both set`},
		{name: "disk_bus", phase: "plan",
			bad: dom(blockHCL("disk", attr("path", "/var/lib/NAME.qcow2"), attr("bus", "nvme"))), want: `with libvirt_domain.d,.*Attribute disk\[0\].bus value must be one of: \["virtio" "sata" "scsi" "ide" "usb"\], got: "nvme"`},
		{name: "disk_device", phase: "plan",
			bad: dom(blockHCL("disk", attr("path", "/var/lib/NAME.img"), attr("device", "floppy"))), want: `with libvirt_domain.d,.*Attribute disk\[0\].device value must be one of: \["disk" "cdrom" "lun"\], got: "floppy"`},
		{name: "disk_io_native", phase: "plan",
			bad:  dom(blockHCL("disk", attr("path", "/var/lib/NAME.qcow2"), attr("io", "native"), attr("cache", "writeback"))),
			want: `Invalid disk tuning with libvirt_domain.d,.*disk 0: io = "native" needs cache = "none" or "directsync"`},
		{name: "disk_lun_file", phase: "plan",
			bad:  dom(blockHCL("disk", attr("path", "/var/lib/NAME.img"), attr("device", "lun"))),
			want: `Invalid disk tuning with libvirt_domain.d,.*disk 0: device = "lun" needs a host block device path \(/dev/...\) or an iscsi network_source, and bus = "scsi"`},
		{name: "disk_sgio_disk", phase: "plan",
			bad:  dom(blockHCL("disk", attr("path", "/dev/sdz"), attr("sgio", "filtered"))),
			want: `Invalid disk tuning with libvirt_domain.d,.*disk 0: sgio applies to device = "lun" only`},
		{name: "disk_wwn", phase: "plan",
			bad:  dom(blockHCL("disk", attr("path", "/var/lib/NAME.img"), attr("bus", "scsi"), attr("wwn", "5000c500"))),
			want: `with libvirt_domain.d,.*disk\[0\].wwn must be 16 hex digits, e.g. 5000c50015ea71ad`},
		{name: "disk_iothread_beyond_iothreads", phase: "plan",
			bad:  dom(attr("iothreads", 1), blockHCL("disk", attr("path", "/var/lib/NAME.img"), attr("iothread", 2))),
			want: `Disk iothread beyond iothreads with libvirt_domain.d,.*disk 0: iothread = 2, but iothreads = 1. Set iothreads to 2 or more`},
		{name: "device_xml_malformed", phase: "plan",
			bad:  dom(attr("device_xml", hcl(`["<shmem name='a'>"]`))),
			want: `Invalid device_xml fragment with libvirt_domain.d,.*device_xml\[0\] \(<shmem name='a'>\): not one XML element`},
		{name: "device_xml_family_device", phase: "plan",
			bad:  dom(attr("device_xml", hcl(`["<disk type='file' device='disk'/>"]`))),
			want: `device_xml\[0\].*<disk> is managed by disk; configure it there, not as raw XML`},
		{name: "qemu_env_name", phase: "plan",
			bad:  dom(attr("qemu_env", hcl(`{ "1X" = "y" }`))),
			want: `qemu_env.*must be an environment variable name`},
		{name: "disk_cdrom_writable", phase: "plan",
			bad:  dom(blockHCL("disk", attr("path", "/var/lib/NAME.iso"), attr("device", "cdrom"), attr("read_only", false))),
			want: `A cdrom is read-only with libvirt_domain.d,.*disk 0 is a cdrom, which is always read-only: remove read_only = false`},
		{name: "disk_iotune_total_and_read", phase: "plan",
			bad:  dom(blockHCL("disk", attr("path", "/var/lib/NAME.img"), attr("iotune", hcl(`{ total_bytes_sec = 1048576, read_bytes_sec = 524288 }`)))),
			want: `Invalid disk tuning with libvirt_domain.d,.*disk 0: iotune total_bytes_sec cannot be set with read_bytes_sec or write_bytes_sec`},
		{name: "disk_iotune_max_below_base", phase: "plan",
			bad:  dom(blockHCL("disk", attr("path", "/var/lib/NAME.img"), attr("iotune", hcl(`{ total_iops_sec = 100, total_iops_sec_max = 50 }`)))),
			want: `Invalid disk tuning with libvirt_domain.d,.*iotune total_iops_sec_max = 50 needs total_iops_sec set and at most 50`},
		{name: "disk_iothread_undefined", phase: "apply",
			bad:  dom(blockHCL("disk", attr("path", "/var/lib/NAME.img"), attr("iothread", 1))),
			want: `Unable to create libvirt domain NAME with libvirt_domain.d,.*iothread \x271\x27 not defined`},
		{name: "disk_iotune_group_only", phase: "plan",
			bad:  dom(blockHCL("disk", attr("path", "/var/lib/NAME.img"), attr("iotune", hcl(`{ group_name = "g" }`)))),
			want: `iotune without a limit with libvirt_domain.d,.*disk 0: iotune sets no limit`},
		{name: "network_mode", phase: "plan",
			bad: network(attr("mode", "nated"), attr("active", false)), want: `with libvirt_network.n,.*Attribute mode value must be one of:.*"nat".*got: "nated"`},
		{name: "network_dhcp_range", phase: "plan",
			bad: network(attr("active", false), attr("addresses", hcl(`["10.251.8.0/24"]`)),
				`dhcp { ranges = [{ start = "10.251.9.10", end = "10.251.9.20" }] }`), want: `Invalid network dhcp with libvirt_network.n,.*ranges\[0\]: 10.251.9.10 - 10.251.9.20 is outside the network\x27s subnets \(10.251.8.0/24\): choose a range inside one of them`},
		{name: "network_overlap_self", phase: "plan",
			bad: network(attr("active", false), attr("addresses", hcl(`["10.251.0.0/16", "10.251.3.0/24"]`))), want: `Invalid network addresses with libvirt_network.n,.*10.251.3.0/24 overlaps 10.251.0.0/16: each address needs a subnet of its own`},
		{name: "network_overlap_host", phase: "apply",
			bad: network(attr("mode", "isolated"), attr("addresses", hcl(`["192.168.122.0/24"]`))), want: `Unable to create network NAME with libvirt_network.n,.*Network is already in use by interface .*Choose addresses in a free subnet. The network was removed again.`},
		{name: "pool_relative_path", phase: "plan",
			bad: pool(attr("target_path", "var/lib/NAME")), want: `Invalid storage pool target_path with libvirt_pool.p,.*target_path "var/lib/NAME" must be a clean absolute path, e.g. "/var/lib/NAME"`},
		{name: "cluster_namespace", phase: "plan",
			bad: resourceHCL("libvirt_cluster_machine", "m", attr("namespace", " "), attr("name", "NAME"), attr("network", "NET"),
				attr("base_pool", "POOL"), attr("domain_pool", "POOL"), attr("image", "base.qcow2")), want: `with libvirt_cluster_machine.m,.*Attribute namespace must not be empty, got:`},
		{name: "ignition_not_json", phase: "plan",
			bad: resourceHCL("libvirt_ignition", "i", attr("name", "NAME"), attr("pool", "POOL"), attr("content", "ignition: {version: 3.4.0}")), want: `Invalid JSON in content with libvirt_ignition.i,.*content does not parse as JSON: .*write it with jsonencode\(\) or render it with Butane`},
		{name: "power_action", phase: "plan",
			bad: resourceHCL("libvirt_domain_power", "p", attr("domain_id", "NAME"), attr("action", "hibernate")), want: `with libvirt_domain_power.p,.*Attribute action value must be one of: \["reboot" "reset" "shutdown" "start" "destroy"\], got: "hibernate"`},
		{name: "snapshot_memory_stopped", phase: "apply",
			setup: dom(attr("name", "NAME-keep")),
			bad:   snapshot(attr("domain_id", hcl("libvirt_domain.d.id")), attr("name", "NAME"), attr("memory", true)), want: `Unable to create snapshot NAME of domain [0-9a-f-]{36} with libvirt_snapshot.s,.*a memory snapshot includes the guest\x27s RAM and needs a running domain, domain NAME-keep is shutoff: start it or set memory = false`},
		{name: "import_snapshot_id", phase: "import", importResource: "libvirt_snapshot.s", importID: "NAME",
			bad: snapshot(attr("domain_id", "NAME")), want: `Invalid import id.*expected <domain name or uuid>/<snapshot name>, e.g. web-1/before-upgrade, got "NAME"`},
		{name: "import_reservation_id", phase: "import", importResource: "libvirt_dhcp_reservation.r", importID: "NET/NAME",
			bad: reservation("r", "NET", "52:54:00:12:34:56", "192.168.122.250"), want: `Invalid import id.*expected <network>/<mac>, e.g. default/52:54:00:12:34:56, got "NET/NAME"`},
		{name: "import_volume_id", phase: "import", importResource: "libvirt_volume.v", importID: "POOL/",
			bad: vol(attr("capacity_bytes", 1048576)), want: `Unable to import volume POOL/.*look up volume POOL/: Storage volume not found: no storage vol with matching key POOL/`},
		{name: "volume_format", phase: "plan",
			bad: vol(attr("capacity_bytes", 1048576), attr("format", "vmdk")), want: `with libvirt_volume.v,.*Attribute format value must be one of: \["qcow2" "raw" "iso"\], got: "vmdk"`},
		{name: "snapshot_name", phase: "plan",
			bad: snapshot(attr("domain_id", "NAME"), attr("name", "before upgrade")), want: `with libvirt_snapshot.s,.*Attribute name must not contain \x27/\x27 or white space, got: before upgrade`},
		{name: "hostdev_missing_pci", phase: "plan",
			bad: dom(attr("running", true), blockHCL("hostdev", attr("pci", "0000:7f:1f.7"))), want: `Host device not found with libvirt_domain.d,.*pci = "0000:7f:1f.7".*libvirt_domain NAME: hostdev 0 names pci 0000:7f:1f.7, but host qemu:///system has no such device.*capability = "pci"`},
		{name: "hostdev_missing_usb", phase: "plan",
			bad: dom(attr("running", true), blockHCL("hostdev", `usb = { vendor = "0x1d6b", product = "0x0002" }`)), want: `Host device not found with libvirt_domain.d,.*hostdev 0 names usb 0x1d6b:0x0002, but host .* has no such device.*capability = "usb_device"`},
		{name: "hostdev_missing_mdev", phase: "plan",
			bad: dom(attr("running", true), blockHCL("hostdev", attr("mdev", "4b20d080-1b54-4048-85b3-a6a62d165c01"))), want: `Host device not found with libvirt_domain.d,.*hostdev 0 names mdev 4b20d080-1b54-4048-85b3-a6a62d165c01, but host .* has no such device`},
		{name: "hostdev_pci_format", phase: "plan",
			bad: dom(blockHCL("hostdev", attr("pci", "3:0.0"))), want: `with libvirt_domain.d,.*hostdev\[0\].pci must be a PCI address such as 0000:03:00.0, got: 3:0.0`},
		{name: "hostdev_two_sources", phase: "plan",
			bad: dom(blockHCL("hostdev", attr("pci", "0000:03:00.0"), attr("usb_address", "1:5"))), want: `Invalid Attribute Combination with libvirt_domain.d,.*2 attributes specified when one \(and only one\) of`},
		{name: "hostdev_no_source", phase: "plan",
			bad: dom(blockHCL("hostdev", attr("managed", false))), want: `Invalid Attribute Combination with libvirt_domain.d,.*No attribute specified when one \(and only one\) of`},
		{name: "hostdev_usb_id", phase: "plan",
			bad: dom(blockHCL("hostdev", `usb = { vendor = "logitech", product = "0xc52b" }`)), want: `with libvirt_domain.d,.*hostdev\[0\].usb.vendor must be a USB id of 4 hex digits such as 0x10de, got: logitech`},
		{name: "hostdev_mdev_model_alone", phase: "plan",
			bad: dom(blockHCL("hostdev", attr("pci", "0000:03:00.0"), attr("mdev_model", "vfio-pci"))), want: `Invalid Attribute Combination with libvirt_domain.d,.*hostdev\[0\].mdev.*must be specified when.*mdev_model`},
		{name: "hostdev_twice", phase: "plan",
			bad: dom(blockHCL("hostdev", attr("pci", "03:00.0")), blockHCL("hostdev", attr("pci", "0000:03:00.0"))), want: `Invalid hostdev with libvirt_domain.d,.*libvirt_domain NAME: hostdev 0 and hostdev 1 both pass through pci 0000:03:00.0`},
		{name: "on_poweroff_preserve", phase: "plan",
			bad: dom(attr("on_poweroff", "preserve")), want: `with libvirt_domain.d,.*on_poweroff value must be one of: \["destroy" "restart"\], got: "preserve"`},
		{name: "on_crash_rename_restart", phase: "plan",
			bad: dom(attr("on_crash", "rename-restart")), want: `with libvirt_domain.d,.*on_crash value must be one of:.*"coredump-restart"\], got: "rename-restart"`},
		{name: "features_hyperv_unknown", phase: "plan",
			bad: dom(`features = { hyperv = ["relaxed", "spinlock"] }`), want: `with libvirt_domain.d,.*features.hyperv\[Value\("spinlock"\)\] value must be one of:.*"spinlocks"`},
		{name: "boot_devices_with_boot_order", phase: "plan",
			bad:  dom(`boot_devices = ["hd"]`, blockHCL("disk", attr("path", "/var/lib/libvirt/images/x.qcow2"), attr("boot_order", 1))),
			want: `boot_devices with boot_order with libvirt_domain.d,.*boot_devices and the boot_order of \[disk 0\] exclude each other`},
		{name: "kernel_relative_path", phase: "plan",
			bad: dom(`kernel = { path = "boot/vmlinuz" }`), want: `with libvirt_domain.d,.*kernel.path must be an absolute path on the host, got: boot/vmlinuz`},
		{name: "fw_cfg_name_outside_opt", phase: "plan",
			bad: dom(`fw_cfg = { "etc/role" = "db" }`), want: `with libvirt_domain.d,.*fw_cfg.*must start with opt/ and be at most 55 characters`},
		{name: "secure_boot_without_uefi", phase: "plan", bad: dom(attr("machine", "q35"), `secure_boot = {}`),
			want: `Invalid secure_boot with libvirt_domain.d,.*libvirt_domain NAME: secure_boot needs firmware = "uefi" \(it is "bios"\)`},
		{name: "secure_boot_on_pc", phase: "plan", bad: dom(attr("firmware", "uefi"), attr("machine", "pc"), `secure_boot = {}`),
			want: `Invalid secure_boot with libvirt_domain.d,.*secure_boot needs a q35 machine.*set machine = "q35"`},
		{name: "secure_boot_smm_off", phase: "plan", bad: dom(attr("firmware", "uefi"), attr("machine", "q35"), `secure_boot = {}`, `features = { smm = false }`),
			want: `Invalid secure_boot with libvirt_domain.d,.*secure_boot needs smm, but features.smm = false`},
		{name: "tpm_device_path_emulator", phase: "plan", bad: dom(`tpm = { device_path = "/dev/tpm0" }`),
			want: `device_path is for the passthrough backend with libvirt_domain.d,.*libvirt_domain NAME: tpm.device_path names a host TPM`},
		{name: "tpm_passthrough_no_device", phase: "plan", bad: dom(`tpm = { backend = "passthrough" }`),
			want: `tpm passthrough needs device_path with libvirt_domain.d,.*set device_path to it, e.g. "/dev/tpm0"`},
		{name: "tpm_model", phase: "plan", bad: dom(`tpm = { model = "tpm-spapr" }`),
			want: `with libvirt_domain.d,.*tpm.model value must be one of: \["tpm-crb" "tpm-tis"\], got: "tpm-spapr"`},
		{name: "title_two_lines", phase: "plan",
			bad: dom(attr("title", "a\nb")), want: `with libvirt_domain.d,.*title must be a single line \(libvirt refuses a title with a newline\)`},
	}
}

// plainFile is the vars of a case uploading FILE: 1 MiB of zeros, not compressed, named name.
func plainFile(name string) func(t *testing.T, _ string) map[string]string {
	return func(t *testing.T, _ string) map[string]string {
		f := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(f, make([]byte, 1<<20), 0o600); err != nil {
			t.Fatal(err)
		}
		return map[string]string{"FILE": f}
	}
}
