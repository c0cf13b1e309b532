package qcow2

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestMaxFileSizeHoldsForQemuImg: fully allocated images (preallocation=full: every data
// cluster, L2 table and refcount block written) that qemu-img makes, at the smallest and
// largest cluster sizes, with extended L2 and 64-bit refcounts, are within the bound,
// and the bound is not absurdly loose for a plain image.
func TestMaxFileSizeHoldsForQemuImg(t *testing.T) {
	if _, err := exec.LookPath("qemu-img"); err != nil {
		t.Skip("qemu-img not installed")
	}
	dir := t.TempDir()
	for _, c := range []struct{ name, opts, size string }{
		{"default", "preallocation=full", "16M"},
		{"512", "cluster_size=512,preallocation=full", "8M"},
		{"16k-ext-l2-64bit", "cluster_size=16k,extended_l2=on,refcount_bits=64,preallocation=full", "8M"},
		{"2M", "cluster_size=2M,preallocation=full", "16M"},
		{"compat-0.10", "compat=0.10,preallocation=full", "8M"},
	} {
		f := filepath.Join(dir, c.name+".qcow2")
		if out, err := exec.Command("qemu-img", "create", "-q", "-f", "qcow2", "-o", c.opts, f, c.size).CombinedOutput(); err != nil {
			t.Fatalf("%s: qemu-img create: %v: %s", c.name, err, out)
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		bound, err := MaxFileSize(b[:HeaderSize])
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		virtual := binary.BigEndian.Uint64(b[24:32])
		if uint64(len(b)) > bound || bound > 2*virtual+80<<20 {
			t.Errorf("%s: file %d bytes, virtual %d, bound %d", c.name, len(b), virtual, bound)
		}
	}
}

func TestMaxFileSize(t *testing.T) {
	h := header(3, 10<<30, 0) // 64 KiB clusters, 16-bit refcounts
	got, err := MaxFileSize(h)
	if err != nil || got < 10<<30 || got > 10<<30+(10<<30)/64+80<<20 {
		t.Errorf("10 GiB: %d, %v", got, err)
	}
	binary.BigEndian.PutUint32(h[60:64], 2) // two internal snapshots: three states
	if s, _ := MaxFileSize(h); s < 3*(10<<30) {
		t.Errorf("with 2 snapshots: %d", s)
	}
	huge := header(3, 1<<63, 0)
	binary.BigEndian.PutUint32(huge[60:64], 1<<31)
	if s, err := MaxFileSize(huge); err != nil || s != 1<<64-1 {
		t.Errorf("saturation: %d, %v", s, err)
	}
	bad := header(3, 1<<30, 0)
	binary.BigEndian.PutUint32(bad[20:24], 30)
	if _, err := MaxFileSize(bad); err == nil {
		t.Error("cluster_bits 30 accepted")
	}
	if _, err := MaxFileSize([]byte("not qcow2")); err == nil {
		t.Error("not qcow2 accepted")
	}
}
