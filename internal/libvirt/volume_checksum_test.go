package libvirt

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func TestParseChecksum(t *testing.T) {
	good := strings.Repeat("ab", 32)
	tests := []struct {
		in      string
		want    string
		wantErr string
	}{
		{in: "sha256:" + good, want: "sha256:" + good},
		{in: "sha256:" + strings.ToUpper(good), want: "sha256:" + good},
		{in: good, wantErr: "expected sha256:<64 hex digits>"},
		{in: "md5:" + good, wantErr: `algorithm "md5" is not supported`},
		{in: "sha256:abc", wantErr: "64 hex digits, got 3"},
		{in: "sha256:" + strings.Repeat("zz", 32), wantErr: "not hex"},
		{in: "", wantErr: "expected sha256"},
	}
	for _, tt := range tests {
		got, err := ParseChecksum(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseChecksum(%q) err = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got.String() != tt.want {
			t.Errorf("ParseChecksum(%q) = %v, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

func TestMeter(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), 10000)
	sum := sha256.Sum256(data)
	right := &Checksum{Algorithm: "sha256", Hex: hex.EncodeToString(sum[:])}
	wrong := &Checksum{Algorithm: "sha256", Hex: strings.Repeat("0", 64)}

	t.Run("right checksum", func(t *testing.T) {
		var calls int
		m := newMeter(bytes.NewReader(data), int64(len(data)), right, 0, func(done, total int64, _ float64) { calls++ })
		if _, err := io.Copy(io.Discard, m); err != nil {
			t.Fatal(err)
		}
		if m.failure() != nil || m.done != int64(len(data)) || calls == 0 {
			t.Fatalf("err %v, done %d, progress calls %d", m.err, m.done, calls)
		}
	})
	t.Run("wrong checksum", func(t *testing.T) {
		m := newMeter(bytes.NewReader(data), int64(len(data)), wrong, time.Hour, nil)
		_, err := io.Copy(io.Discard, m)
		if !errors.Is(err, ErrChecksumMismatch) || !errors.Is(m.failure(), ErrChecksumMismatch) {
			t.Fatalf("err = %v, want ErrChecksumMismatch", err)
		}
		if !strings.Contains(err.Error(), right.Hex) {
			t.Errorf("message %q does not name the actual sum", err)
		}
	})
	t.Run("short source", func(t *testing.T) {
		m := newMeter(bytes.NewReader(data[:100]), int64(len(data)), nil, time.Hour, nil)
		_, err := io.Copy(io.Discard, m)
		if err == nil || !strings.Contains(err.Error(), "ended after 100 of 100000 bytes") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("no checksum: no hashing, packets of at most uploadChunk", func(t *testing.T) {
		big := make([]byte, 3*uploadChunk+5)
		m := newMeter(bytes.NewReader(big), int64(len(big)), nil, time.Hour, nil)
		buf := make([]byte, 4*uploadChunk) // what go-libvirt reads into
		var reads int
		for {
			n, err := m.Read(buf)
			if n > uploadChunk {
				t.Fatalf("read %d bytes at once, want at most %d", n, uploadChunk)
			}
			reads++
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if m.h != nil || m.done != int64(len(big)) || reads < 4 {
			t.Fatalf("hash %v, done %d of %d, %d reads", m.h, m.done, len(big), reads)
		}
	})
	t.Run("broken source", func(t *testing.T) {
		m := newMeter(io.MultiReader(bytes.NewReader(data[:10]), iotestErr{}), -1, nil, time.Hour, nil)
		_, err := io.Copy(io.Discard, m)
		if err == nil || !strings.Contains(err.Error(), "after 10 bytes") || !strings.Contains(err.Error(), "connection reset") {
			t.Fatalf("err = %v", err)
		}
	})
}

type iotestErr struct{}

func (iotestErr) Read([]byte) (int, error) { return 0, errors.New("connection reset by peer") }

func FuzzParseChecksum(f *testing.F) {
	good := strings.Repeat("ab", 32)
	for _, s := range []string{"sha256:" + good, "sha256:" + strings.ToUpper(good), good, "md5:" + good, "sha256:abc",
		"sha256:" + strings.Repeat("zz", 32), "", ":", "sha256:", "sha256::" + good} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseChecksum(s)
		if err != nil {
			return
		}
		if c.Algorithm != "sha256" || len(c.Hex) != 64 || c.Hex != strings.ToLower(c.Hex) {
			t.Fatalf("ParseChecksum(%q) = %+v: want sha256 and 64 lower-case hex digits", s, c)
		}
		if !strings.EqualFold(c.String(), s) {
			t.Fatalf("ParseChecksum(%q).String() = %q: only the case may differ", s, c.String())
		}
		if again, err := ParseChecksum(c.String()); err != nil || again != c {
			t.Fatalf("round trip of %q: %+v, %v; want %+v", s, again, err, c)
		}
	})
}
