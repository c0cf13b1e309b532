package qcow2

import (
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// header is a hand-made header of HeaderSize bytes (version 3: header_length 104).
func header(version uint32, size uint64, backing uint64) []byte {
	b := make([]byte, HeaderSize)
	copy(b, magic)
	binary.BigEndian.PutUint32(b[4:8], version)
	binary.BigEndian.PutUint64(b[8:16], backing)
	binary.BigEndian.PutUint32(b[20:24], 16) // cluster_bits
	binary.BigEndian.PutUint64(b[24:32], size)
	if version == 3 {
		binary.BigEndian.PutUint32(b[96:100], 4) // refcount_order
		binary.BigEndian.PutUint32(b[100:104], v3HeaderLen)
	}
	return b
}

func withFeatures(b []byte, f uint64) []byte {
	binary.BigEndian.PutUint64(b[72:80], f)
	return b
}

func TestProbe(t *testing.T) {
	tests := []struct {
		name    string
		in      []byte
		want    Header
		wantErr string
		unsafe  bool
		notQ    bool
	}{
		{name: "v3 14MiB", in: header(3, 14<<20, 0), want: Header{Version: 3, VirtualSize: 14 << 20}},
		{name: "v2 20GiB overlay", in: header(2, 20<<30, 0x150), want: Header{Version: 2, VirtualSize: 20 << 30, HasBacking: true}},
		{name: "v2 header only (72 bytes)", in: header(2, 1<<20, 0)[:72], want: Header{Version: 2, VirtualSize: 1 << 20}},
		{name: "v2 ignores bytes 72..", in: withFeatures(header(2, 1<<20, 0), FeatureExternalData), want: Header{Version: 2, VirtualSize: 1 << 20}},
		{name: "raw zeros", in: make([]byte, 512), notQ: true},
		{name: "iso", in: append(make([]byte, 1), "CD001"...), notQ: true},
		{name: "empty", in: nil, notQ: true},
		{name: "short raw", in: []byte("QF"), notQ: true},
		{name: "truncated", in: header(3, 1, 0)[:20], wantErr: "truncated"},
		{name: "v3 cut at 72 bytes", in: header(3, 1<<20, 0)[:72], wantErr: "truncated: 72 bytes, a version 3 header has 104"},
		{name: "v2 cut at 32 bytes", in: header(2, 1<<20, 0)[:32], wantErr: "truncated"},
		{name: "magic only", in: []byte("QFI\xfb"), wantErr: "truncated"},
		{name: "version 1", in: header(1, 1<<20, 0), wantErr: "unsupported version 1"},
		{name: "zero size", in: header(3, 0, 0), wantErr: "virtual size is 0"},
		{name: "v3 header_length 72", in: func() []byte { b := header(3, 1<<20, 0); binary.BigEndian.PutUint32(b[100:104], 72); return b }(), wantErr: "header_length 72"},

		// Incompatible features (v3): the external data file names a host file for QEMU.
		{name: "external data file", in: withFeatures(header(3, 1<<20, 0), FeatureExternalData), unsafe: true, wantErr: "external data file"},
		{name: "external data file and dirty", in: withFeatures(header(3, 1<<20, 0), FeatureExternalData|FeatureDirty), unsafe: true, wantErr: "qemu-img convert"},
		{name: "corrupt", in: withFeatures(header(3, 1<<20, 0), FeatureCorrupt), unsafe: true, wantErr: "marked corrupt"},
		{name: "unknown bit 5", in: withFeatures(header(3, 1<<20, 0), 1<<5), unsafe: true, wantErr: "bits 5 of incompatible_features"},
		{name: "unknown bits 5 and 63", in: withFeatures(header(3, 1<<20, 0), 1<<5|1<<63|FeatureDirty), unsafe: true, wantErr: "bits 5, 63"},
		{name: "dirty (QEMU repairs it on open)", in: withFeatures(header(3, 1<<20, 0), FeatureDirty), want: Header{Version: 3, VirtualSize: 1 << 20, IncompatibleFeatures: FeatureDirty}},
		{name: "zstd and extended L2", in: withFeatures(header(3, 1<<20, 0), FeatureCompressionType|FeatureExtendedL2),
			want: Header{Version: 3, VirtualSize: 1 << 20, IncompatibleFeatures: FeatureCompressionType | FeatureExtendedL2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Probe(tt.in)
			switch {
			case tt.notQ:
				if !errors.Is(err, ErrNotQCOW2) {
					t.Fatalf("Probe: err = %v, want ErrNotQCOW2", err)
				}
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Probe: err = %v, want one containing %q", err, tt.wantErr)
				}
				if errors.Is(err, ErrUnsafe) != tt.unsafe {
					t.Fatalf("Probe: errors.Is(%v, ErrUnsafe) = %v, want %v", err, !tt.unsafe, tt.unsafe)
				}
			default:
				if err != nil {
					t.Fatal(err)
				}
				if got != tt.want {
					t.Fatalf("Probe = %+v, want %+v", got, tt.want)
				}
			}
		})
	}
}

// TestProbe_qemuImg reads headers qemu-img made (testdata/README.md): the data_file one
// must be refused, the others read.
func TestProbe_qemuImg(t *testing.T) {
	tests := []struct {
		file    string
		want    Header
		wantErr string
	}{
		{file: "datafile.qcow2.head", wantErr: "external data file"},
		{file: "plain-v3.qcow2.head", want: Header{Version: 3, VirtualSize: 1 << 20}},
		{file: "plain-v2.qcow2.head", want: Header{Version: 2, VirtualSize: 1 << 20}},
		{file: "features.qcow2.head", want: Header{Version: 3, VirtualSize: 1 << 20, IncompatibleFeatures: FeatureCompressionType | FeatureExtendedL2}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := Probe(b[:HeaderSize]) // what UploadVolume peeks at
			if tt.wantErr != "" {
				if !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Probe: err = %v, want ErrUnsafe naming %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Probe = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

// TestProbe_qemuImgNow makes a data-file image with this host's qemu-img, when there is
// one (TestProbe_qemuImg covers the case that it is missing).
func TestProbe_qemuImgNow(t *testing.T) {
	bin, err := exec.LookPath("qemu-img")
	if err != nil {
		t.Skip("qemu-img not installed; TestProbe_qemuImg covers its output")
	}
	dir := t.TempDir()
	img := filepath.Join(dir, "x.qcow2")
	if out, err := exec.Command(bin, "create", "-q", "-f", "qcow2", "-o", "data_file="+filepath.Join(dir, "data.raw"), img, "1M").CombinedOutput(); err != nil {
		t.Fatalf("qemu-img create: %v\n%s", err, out)
	}
	b, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Probe(b[:HeaderSize]); !errors.Is(err, ErrUnsafe) {
		t.Fatalf("Probe of a data_file image: err = %v, want ErrUnsafe", err)
	}
}

func FuzzProbe(f *testing.F) {
	f.Add(header(3, 14<<20, 0))
	f.Add(header(2, 1<<30, 0x150))
	f.Add(withFeatures(header(3, 1<<20, 0), FeatureExternalData))
	f.Add([]byte("QFI\xfb"))
	for _, n := range []string{"datafile", "plain-v3", "plain-v2", "features"} {
		if b, err := os.ReadFile(filepath.Join("testdata", n+".qcow2.head")); err == nil {
			f.Add(b[:HeaderSize])
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := Probe(b)
		if err != nil {
			if h != (Header{}) {
				t.Fatalf("an error (%v) with a header %+v", err, h)
			}
			return
		}
		if h.VirtualSize == 0 || (h.Version != 2 && h.Version != 3) {
			t.Fatalf("accepted %x as %+v", b, h)
		}
		if h.Version == 2 && len(b) < v2HeaderLen || h.Version == 3 && len(b) < v3HeaderLen {
			t.Fatalf("accepted a %d-byte version %d header", len(b), h.Version)
		}
		// Whatever is accepted names no other file for QEMU but a backing file (reported).
		if h.Version == 3 {
			f := binary.BigEndian.Uint64(b[72:80])
			if f&(FeatureExternalData|FeatureCorrupt) != 0 || f&^knownFeatures != 0 {
				t.Fatalf("accepted incompatible features %#x", f)
			}
		}
		if h.HasBacking != (binary.BigEndian.Uint64(b[8:16]) != 0) {
			t.Fatalf("HasBacking = %v for backing_file_offset %#x", h.HasBacking, b[8:16])
		}
	})
}
