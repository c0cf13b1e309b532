package provider_test

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

var (
	compressedImportIgnore = append([]string{"source_compression"}, volumeImportIgnore...)
	runningImportIgnore    = append([]string{"permissions.owner", "permissions.group", "allocation_bytes"}, compressedImportIgnore...)
)

// compressed is data compressed as kind: gzip, xz and zstd by the libraries the provider
// reads them with, bzip2 by the bzip2 program (Go writes no bzip2).
func compressed(t *testing.T, kind string, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	var w io.WriteCloser
	var err error
	switch kind {
	case "gzip":
		w = gzip.NewWriter(&buf)
	case "xz":
		w, err = xz.NewWriter(&buf)
	case "zstd":
		w, err = zstd.NewWriter(&buf)
	case "bzip2":
		cmd := exec.Command("bzip2", "-c")
		cmd.Stdin = bytes.NewReader(data)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("bzip2 -c (the bzip2 package makes the test's .bz2 image): %v", err)
		}
		return out
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// fileServer serves files by path on 127.0.0.1 (in the test's network namespace, where the
// provider downloads): those in sized with a Content-Length, the others chunked, so that
// their length is not known before the end.
func fileServer(t *testing.T, files map[string][]byte, sized map[string]bool) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if sized[r.URL.Path] {
			w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		for len(b) > 0 {
			n := min(len(b), 64<<10)
			_, _ = w.Write(b[:n])
			w.(http.Flusher).Flush()
			b = b[n:]
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func sha256Of(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// TestAccVolumeCompressed_boots: the guest image served compressed each way by an HTTP
// server in the test namespace, uploaded with source_compression auto (by name, by magic
// bytes alone for a URL without an extension, and unset) and one explicit; each volume
// has the image's virtual size and holds the image byte for byte, and each of four
// guests boots from its volume to a DHCP lease under its own hostname. The second plan
// is empty, an import verifies.
func TestAccVolumeCompressed_boots(t *testing.T) {
	acctest.RequireAcc(t)
	img := acctest.GuestImage(t)
	data, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	size := imageVirtualSize(t, img)
	network := acctest.Network()
	type guest struct{ kind, path, compression, name, hostname, seed string }
	guests := []*guest{
		{kind: "gzip", path: "/tiny.qcow2.gz", compression: "auto"},
		{kind: "xz", path: "/tiny.qcow2.xz", compression: "xz"},
		{kind: "zstd", path: "/image", compression: ""}, // no extension: magic bytes alone
		{kind: "bzip2", path: "/tiny.qcow2.bz2", compression: "auto"},
	}
	files, sized := map[string][]byte{}, map[string]bool{"/tiny.qcow2.gz": true, "/tiny.qcow2.bz2": true}
	var config strings.Builder
	config.WriteString(acctest.ProviderBlock(""))
	gone := map[string]acctest.Lookup{}
	for _, g := range guests {
		files[g.path] = compressed(t, g.kind, data)
		g.name = acctest.RandomName("zvol")
		g.hostname = strings.ReplaceAll(g.name, "tfacc-", "tfaccvm-")
		g.seed = acctest.Seed(t, g.name+"-seed.iso", g.hostname)
		gone["domain "+g.name] = acctest.DomainLookup(g.name)
		gone["volume "+g.name] = acctest.VolumeLookup(acctest.Pool(), g.name)
	}
	srv := fileServer(t, files, sized)
	for _, g := range guests {
		lines := []string{attr("source_url", srv.URL+g.path), attr("source_checksum", "sha256:"+sha256Of(files[g.path]))}
		if g.compression != "" {
			lines = append(lines, attr("source_compression", g.compression))
		}
		config.WriteString(volumeHCL(g.kind, g.name, lines...))
		config.WriteString(resourceHCL("libvirt_domain", g.kind, attr("name", g.name), attr("vcpu", 1), attr("memory_mib", 128),
			attr("cloudinit_id", g.seed), blockHCL("disk", attr("volume_id", hcl("libvirt_volume."+g.kind+".id"))),
			blockHCL("network_interface", attr("network", network), blockHCL("wait_for_ip", attr("source", "lease"), attr("timeout", "5m")))))
	}
	var checks []resource.TestCheckFunc
	for _, g := range guests {
		checks = append(checks,
			resource.TestCheckResourceAttr("libvirt_volume."+g.kind, "capacity_bytes", strconv.FormatInt(size, 10)),
			resource.TestCheckResourceAttr("libvirt_volume."+g.kind, "format", "qcow2"),
			acctest.CheckVolume(t, acctest.Pool(), g.name, func(v *libvirt.VolumeInfo) error {
				h := sha256.New()
				if err := acctest.Client(t).DownloadVolume(acctest.Ctx(t), libvirt.VolumeRef{Key: v.Key}, h); err != nil {
					return err
				}
				if got, want := hex.EncodeToString(h.Sum(nil)), sha256Of(data); got != want {
					return fmt.Errorf("%s volume holds sha256 %s, want the image's %s", g.kind, got, want)
				}
				return nil
			}),
			leaseWithHostname(t, "libvirt_domain."+g.kind, network, g.hostname))
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(gone),
		Steps: []resource.TestStep{
			{Config: config.String(), ConfigPlanChecks: acctest.Plans(), Check: resource.ComposeAggregateTestCheckFunc(checks...)},
			// Imported while its guest runs: libvirt has given the file to the qemu user and
			// the guest writes to it, so owner, group and allocation are not what create saw.
			importStep("libvirt_volume.xz", acctest.Pool()+"/"+guests[1].name, runningImportIgnore...),
			importStep("libvirt_volume.zstd", "", runningImportIgnore...),
		},
	})
}

// leaseWithHostname checks that the domain res has a DHCP lease on network for its
// ip_address, under hostname (the guest read its seed: it booted from its disk).
func leaseWithHostname(t *testing.T, res, network, hostname string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		r, ok := s.RootModule().Resources[res]
		if !ok {
			return fmt.Errorf("%s not in state", res)
		}
		ip, mac := r.Primary.Attributes["ip_address"], r.Primary.Attributes["network_interface.0.mac"]
		leases, err := acctest.Leases(t, network)
		if err != nil {
			return err
		}
		var seen []string
		for _, l := range leases[mac] {
			if l.IP == ip && l.Hostname == hostname {
				return nil
			}
			seen = append(seen, l.IP+"/"+l.Hostname)
		}
		return fmt.Errorf("%s: no lease for %s (%s) with hostname %s; leases of that MAC: %v", res, ip, mac, hostname, seen)
	}
}

// TestAccVolumeCompressed_raw: compressed raw images, whose length is not known before
// they are all read: served chunked and decompressed, each is the size it is once
// decompressed (the volume grows as libvirt writes it) and holds it byte for byte; with
// capacity_bytes, it is that size; one larger than capacity_bytes fails and leaves no
// volume. A wrong checksum (over the compressed download) fails and leaves no volume;
// then the right one uploads. Second plans are empty; an import verifies.
func TestAccVolumeCompressed_raw(t *testing.T) {
	acctest.RequireAcc(t)
	raw := bytes.Repeat([]byte("raw disk sector. "), 3<<16) // 3.2 MiB, not a multiple of 512
	files := map[string][]byte{"/disk.img.gz": compressed(t, "gzip", raw), "/disk.img.zst": compressed(t, "zstd", raw),
		"/disk.img.xz": compressed(t, "xz", raw)}
	srv := fileServer(t, files, map[string]bool{"/disk.img.xz": true})
	grown, sized, big, sum := acctest.RandomName("zvol"), acctest.RandomName("zvol"), acctest.RandomName("zvol"), acctest.RandomName("zvol")
	base := acctest.ProviderBlock("") +
		volumeHCL("grown", grown, attr("source_url", srv.URL+"/disk.img.gz"), attr("format", "raw")) +
		volumeHCL("sized", sized, attr("source_url", srv.URL+"/disk.img.zst"), attr("format", "raw"), attr("capacity_bytes", 8<<20))
	wrong := "sha256:" + hex.EncodeToString(make([]byte, 32))
	checked := func(checksum string) string {
		return base + volumeHCL("sum", sum, attr("source_url", srv.URL+"/disk.img.xz"), attr("format", "raw"), attr("source_checksum", checksum))
	}
	holdsRaw := func(name string) resource.TestCheckFunc {
		return acctest.CheckVolume(t, acctest.Pool(), name, func(v *libvirt.VolumeInfo) error {
			var buf bytes.Buffer
			if err := acctest.Client(t).DownloadVolume(acctest.Ctx(t), libvirt.VolumeRef{Key: v.Key}, &buf); err != nil {
				return err
			}
			if !bytes.HasPrefix(buf.Bytes(), raw) {
				return fmt.Errorf("volume %s does not start with the %d decompressed bytes (%d bytes)", name, len(raw), buf.Len())
			}
			return nil
		})
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.VolumesGone(grown, sized, big, sum),
		Steps: []resource.TestStep{
			{
				Config:           base,
				ConfigPlanChecks: acctest.Plans(),
				ConfigStateChecks: append(acctest.State("libvirt_volume.grown", "capacity_bytes", len(raw), "format", "raw"),
					acctest.State("libvirt_volume.sized", "capacity_bytes", 8<<20)...),
				Check: resource.ComposeAggregateTestCheckFunc(holdsRaw(grown), holdsRaw(sized)),
			},
			importStep("libvirt_volume.grown", acctest.Pool()+"/"+grown, compressedImportIgnore...),
			{
				Config: base + volumeHCL("big", big, attr("source_url", srv.URL+"/disk.img.gz"), attr("format", "raw"),
					attr("capacity_bytes", 1<<20)),
				ExpectError: acctest.Wrapped(`Unable to create volume.*the image .*disk.img.gz is larger than capacity_bytes = 1048576.*half-made volume .* was deleted`),
			},
			{
				PreConfig:   func() { acctest.RequireVolumeGone(t, acctest.Pool(), big) },
				Config:      checked(wrong),
				ExpectError: acctest.Wrapped(`Unable to create volume.*checksum mismatch: the source's sha256 is ` + sha256Of(files["/disk.img.xz"]) + `, source_checksum says 0{64}.*half-made volume .* was deleted`),
			},
			{
				PreConfig:         func() { acctest.RequireVolumeGone(t, acctest.Pool(), sum) },
				Config:            checked("sha256:" + sha256Of(files["/disk.img.xz"])),
				ConfigPlanChecks:  acctest.Plans(),
				ConfigStateChecks: acctest.State("libvirt_volume.sum", "capacity_bytes", len(raw)),
				Check:             holdsRaw(sum),
			},
		},
	})
}
