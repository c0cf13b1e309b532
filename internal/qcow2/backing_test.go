package qcow2

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// rebase streams src through a BackingWriter (in odd-sized writes, as a download comes)
// into dst naming backing.
func rebase(t *testing.T, src, dst, backing string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w := NewBackingWriter(&out, backing, "qcow2")
	for len(b) > 0 {
		n := min(len(b), 777)
		if _, err := w.Write(b[:n]); err != nil {
			t.Fatal(err)
		}
		b = b[n:]
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestSetBacking_qemuImg makes a base and a standalone top holding one changed region (as
// an incremental backup leaves it: the rest unallocated), names the base as the top's
// backing file in pure Go, and asks qemu-img: the chain is base <- top, both check clean,
// and the top reads as base + change (compared with the same change written onto a copy
// of the base). Both header versions, two cluster sizes, with a leftover extension.
func TestSetBacking_qemuImg(t *testing.T) {
	if _, err := exec.LookPath("qemu-img"); err != nil {
		t.Fatal("qemu-img is needed (qemu-utils)")
	}
	for _, c := range []struct{ name, opts string }{
		{"v2 64k", "compat=0.10,cluster_size=65536"},
		{"v3 64k", "compat=1.1,cluster_size=65536"},
		{"v3 4k zstd", "compat=1.1,cluster_size=4096,compression_type=zstd"},
		{"v3 lazy refcounts", "compat=1.1,lazy_refcounts=on"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			base, top, linked, want := filepath.Join(dir, "base.qcow2"), filepath.Join(dir, "top0.qcow2"),
				filepath.Join(dir, "top.qcow2"), filepath.Join(dir, "want.qcow2")
			run(t, "qemu-img", "create", "-q", "-f", "qcow2", "-o", c.opts, base, "8M")
			run(t, "qemu-io", "-f", "qcow2", "-c", "write -P 0xaa 0 8M", base)
			run(t, "qemu-img", "create", "-q", "-f", "qcow2", "-o", c.opts, top, "8M")
			run(t, "qemu-io", "-f", "qcow2", "-c", "write -P 0x55 1M 64k", top)
			run(t, "cp", base, want)
			run(t, "qemu-io", "-f", "qcow2", "-c", "write -P 0x55 1M 64k", want)
			rebase(t, top, linked, base)

			var info []struct {
				Filename       string `json:"filename"`
				BackingFile    string `json:"backing-filename"`
				BackingFormat  string `json:"backing-filename-format"`
				FullBackingRef string `json:"full-backing-filename"`
			}
			if err := json.Unmarshal([]byte(run(t, "qemu-img", "info", "--output=json", "--backing-chain", linked)), &info); err != nil {
				t.Fatal(err)
			}
			if len(info) != 2 || info[0].BackingFile != base || info[0].BackingFormat != "qcow2" || info[1].Filename != base {
				t.Fatalf("chain = %+v, want %s <- %s", info, base, linked)
			}
			run(t, "qemu-img", "check", linked)
			run(t, "qemu-img", "compare", "-f", "qcow2", "-F", "qcow2", linked, want)
			// What qemu-img map says of the unchanged clusters: they come from the base.
			if m := run(t, "qemu-img", "map", "--output=json", linked); !strings.Contains(m, `"depth": 1`) {
				t.Fatalf("no cluster falls through to the base: %s", m)
			}
		})
	}
}

func TestSetBacking_refusals(t *testing.T) {
	dir := t.TempDir()
	img := filepath.Join(dir, "a.qcow2")
	run(t, "qemu-img", "create", "-q", "-f", "qcow2", "-o", "cluster_size=512", img, "1M")
	b, _ := os.ReadFile(img)
	long := strings.Repeat("x", 500)
	for _, c := range []struct {
		name    string
		b       []byte
		backing string
		want    string
	}{
		{"not qcow2", []byte("hello world"), "/a", "not a qcow2"},
		{"empty name", bytes.Clone(b), "", "1 to 1023 bytes"},
		{"name too long for 512 B clusters", bytes.Clone(b), long, "does not fit into the header cluster (512 bytes"},
		{"incomplete cluster", bytes.Clone(b[:300]), "/a", "incomplete"},
		{"already backed", func() []byte { x := bytes.Clone(b); binary.BigEndian.PutUint64(x[8:16], 400); return x }(), "/a", "already has a backing"},
		{"L1 in cluster 0", func() []byte { x := bytes.Clone(b); binary.BigEndian.PutUint64(x[40:48], 256); return x }(), "/a", "L1 table starts at 256"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := SetBacking(c.b, c.backing, "qcow2")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("SetBacking: %v, want an error with %q", err, c.want)
			}
		})
	}
	w := NewBackingWriter(io.Discard, "/a", "qcow2")
	if _, err := w.Write(b[:200]); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err == nil || !strings.Contains(err.Error(), "ended after 200 bytes") {
		t.Fatalf("Close of a short stream: %v", err)
	}
}

// FuzzSetBacking: any bytes either fail or give a header whose extensions parse and
// whose backing name reads back.
func FuzzSetBacking(f *testing.F) {
	h := header(3, 1<<20, 0)
	binary.BigEndian.PutUint32(h[20:24], 9)
	binary.BigEndian.PutUint64(h[40:48], 512)
	binary.BigEndian.PutUint64(h[48:56], 1024)
	f.Add(append(h, make([]byte, 512-len(h))...), "/var/backups/disk.qcow2")
	f.Fuzz(func(t *testing.T, b []byte, name string) {
		if err := SetBacking(b, name, "qcow2"); err != nil {
			return
		}
		off, n := binary.BigEndian.Uint64(b[8:16]), binary.BigEndian.Uint32(b[16:20])
		if string(b[off:off+uint64(n)]) != name {
			t.Fatalf("backing name reads %q, want %q", b[off:off+uint64(n)], name)
		}
		hdrLen := uint64(v2HeaderLen)
		if binary.BigEndian.Uint32(b[4:8]) == 3 {
			hdrLen = uint64(binary.BigEndian.Uint32(b[100:104]))
		}
		exts, err := extensions(b, hdrLen)
		if err != nil || len(exts) == 0 || exts[0].typ != extBackingFormat || string(exts[0].data) != "qcow2" {
			t.Fatalf("extensions after SetBacking: %v %v", exts, err)
		}
	})
}
