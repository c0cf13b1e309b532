package qcow2

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

func header(version uint32, size uint64, backing uint64) []byte {
	b := make([]byte, HeaderSize)
	copy(b, magic)
	binary.BigEndian.PutUint32(b[4:8], version)
	binary.BigEndian.PutUint64(b[8:16], backing)
	binary.BigEndian.PutUint32(b[20:24], 16) // cluster_bits
	binary.BigEndian.PutUint64(b[24:32], size)
	return b
}

func TestProbe(t *testing.T) {
	tests := []struct {
		name    string
		in      []byte
		want    Header
		wantErr string
		notQ    bool
	}{
		{name: "v3 14MiB", in: header(3, 14<<20, 0), want: Header{Version: 3, VirtualSize: 14 << 20}},
		{name: "v2 20GiB overlay", in: header(2, 20<<30, 0x150), want: Header{Version: 2, VirtualSize: 20 << 30, HasBacking: true}},
		{name: "exactly 32 bytes", in: header(3, 1<<20, 0)[:32], want: Header{Version: 3, VirtualSize: 1 << 20}},
		{name: "raw zeros", in: make([]byte, 512), notQ: true},
		{name: "iso", in: append(make([]byte, 1), "CD001"...), notQ: true},
		{name: "empty", in: nil, notQ: true},
		{name: "truncated", in: header(3, 1, 0)[:20], wantErr: "truncated"},
		{name: "version 1", in: header(1, 1<<20, 0), wantErr: "unsupported version 1"},
		{name: "zero size", in: header(3, 0, 0), wantErr: "virtual size is 0"},
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

func FuzzProbe(f *testing.F) {
	f.Add(header(3, 14<<20, 0))
	f.Add([]byte("QFI\xfb"))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := Probe(b)
		if err == nil && (h.VirtualSize == 0 || len(b) < 32) {
			t.Fatalf("accepted %x as %+v", b, h)
		}
	})
}
