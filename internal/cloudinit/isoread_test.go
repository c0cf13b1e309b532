package cloudinit

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fixtureFiles is what testdata/genisoimage-*.iso.gz hold (see testdata/README.md).
var fixtureFiles = map[string]string{
	"user-data":      "#cloud-config\nhostname: fixture\n",
	"meta-data":      "instance-id: i-fixture\nlocal-hostname: fixture\n",
	"network-config": "version: 2\nethernets:\n  eth0:\n    dhcp4: true\n",
	"vendor-data":    "#cloud-config\npackages: []\n",
}

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readPromptly runs ReadISO with a deadline and turns a panic into a test failure, so
// that a reader that crashes or loops fails this test instead of the whole binary.
func readPromptly(t *testing.T, img []byte) (string, map[string][]byte, error) {
	t.Helper()
	type result struct {
		label string
		files map[string][]byte
		err   error
		panic any
	}
	done := make(chan result, 1)
	go func() {
		var r result
		defer func() {
			r.panic = recover()
			done <- r
		}()
		r.label, r.files, r.err = ReadISO(img)
	}()
	select {
	case r := <-done:
		if r.panic != nil {
			t.Fatalf("ReadISO panicked on a %d-byte image: %v", len(img), r.panic)
		}
		return r.label, r.files, r.err
	case <-time.After(5 * time.Second):
		t.Fatalf("ReadISO did not return within 5 s on a %d-byte image (it loops)", len(img))
		return "", nil, nil
	}
}

func checkFiles(t *testing.T, files map[string][]byte, want map[string]string) {
	t.Helper()
	if len(files) != len(want) {
		t.Errorf("files = %v, want %d files", keys(files), len(want))
	}
	for name, w := range want {
		got, ok := files[name]
		if !ok {
			t.Errorf("file %s missing (have %v)", name, keys(files))
			continue
		}
		if string(got) != w {
			t.Errorf("%s = %q, want %q", name, got, w)
		}
	}
}

// TestReadISO_genisoimage reads seeds made by genisoimage -joliet [-rock] (the way
// cloud-localds makes them): the names are the real ones, not the ISO9660 "USER_DAT.;1".
func TestReadISO_genisoimage(t *testing.T) {
	for _, f := range []string{"genisoimage-joliet-rock.iso.gz", "genisoimage-joliet.iso.gz"} {
		t.Run(f, func(t *testing.T) {
			label, files, err := readPromptly(t, fixture(t, f))
			if err != nil {
				t.Fatal(err)
			}
			if label != "cidata" {
				t.Errorf("label = %q, want cidata", label)
			}
			checkFiles(t, files, fixtureFiles)
		})
	}
}

// TestReadISO_genisoimageNow does the same with the genisoimage of this machine, when
// there is one (the fixtures above cover the case that it is missing).
func TestReadISO_genisoimageNow(t *testing.T) {
	bin, err := exec.LookPath("genisoimage")
	if err != nil {
		t.Skip("genisoimage not installed; TestReadISO_genisoimage covers its output")
	}
	dir := t.TempDir()
	var args []string
	for name, content := range fixtureFiles {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, p)
	}
	for _, flags := range [][]string{{"-joliet", "-rock"}, {"-J", "-r"}, {"-joliet"}, {"-rock"}} {
		t.Run(strings.Join(flags, " "), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "seed.iso")
			cmd := append([]string{"-quiet", "-output", out, "-volid", "cidata"}, flags...)
			if b, err := exec.Command(bin, append(cmd, args...)...).CombinedOutput(); err != nil {
				t.Fatalf("genisoimage: %v\n%s", err, b)
			}
			img, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			label, files, err := readPromptly(t, img)
			if err != nil {
				t.Fatal(err)
			}
			if label != "cidata" {
				t.Errorf("label = %q, want cidata", label)
			}
			checkFiles(t, files, fixtureFiles)
		})
	}
}

func TestPlainName(t *testing.T) {
	for in, want := range map[string]string{
		"user-data;1":    "user-data",
		"USER_DAT.;1":    "user_dat",
		"README.TXT;1":   "readme.txt",
		"NOVERSION":      "noversion",
		"meta-data":      "meta-data",
		"A.B;2":          "a.b",
		"network-config": "network-config",
	} {
		if got := plainName(in); got != want {
			t.Errorf("plainName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestReadISO_truncated: kdomanski/iso9660 v0.4.0 panicked on our own seed cut at
// 36,864 bytes (18 sectors: the volume descriptors, but not the root directory). Every
// cut of a seed is an error, promptly.
func TestReadISO_truncated(t *testing.T) {
	img, _, err := BuildISO(Seed{UserData: "#cloud-config\n", MetaData: "instance-id: x\n", NetworkConfig: ptr("version: 2\n")})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = readPromptly(t, img[:36864])
	if err == nil || !strings.Contains(err.Error(), "outside the image") {
		t.Fatalf("seed cut at 36864 bytes: err = %v, want one saying the root directory lies outside the image", err)
	}
	for _, img := range [][]byte{img, fixture(t, "genisoimage-joliet-rock.iso.gz"), fixture(t, "genisoimage-joliet.iso.gz")} {
		for n := 0; n < len(img); n += 509 {
			if _, files, err := readPromptly(t, img[:n]); err == nil {
				// A cut after every extent of a file may still read; never beyond the bytes.
				for name, b := range files {
					if len(b) > n {
						t.Fatalf("cut at %d: file %s has %d bytes", n, name, len(b))
					}
				}
			}
		}
	}
}

// withSystemUse rebuilds the root directory of an image made by WriteISO with su
// appended to the System Use field of record i (0 is ".").
func withSystemUse(t *testing.T, img []byte, i int, su []byte) []byte {
	t.Helper()
	out := bytes.Clone(img)
	dir := out[18*sector : 19*sector]
	var recs [][]byte
	for p := 0; p < len(dir) && dir[p] != 0; p += int(dir[p]) {
		recs = append(recs, bytes.Clone(dir[p:p+int(dir[p])]))
	}
	if i >= len(recs) {
		t.Fatalf("the root directory has %d records, not %d", len(recs), i+1)
	}
	recs[i] = append(recs[i], su...)
	recs[i][0] = byte(len(recs[i]))
	clear(dir)
	p := 0
	for _, r := range recs {
		p += copy(dir[p:], r)
	}
	return out
}

// TestReadISO_zeroLengthSUSP: kdomanski/iso9660 v0.4.0 looped forever on a System Use
// entry of length 0 (it advanced by the entry's length).
func TestReadISO_zeroLengthSUSP(t *testing.T) {
	img, err := WriteISO("cidata", map[string][]byte{"user-data": []byte("u"), "meta-data": []byte("m")})
	if err != nil {
		t.Fatal(err)
	}
	zero := []byte{'N', 'M', 0, 1}
	sp := []byte{'S', 'P', 7, 1, 0xbe, 0xef, 0, 0} // Rock Ridge announced in "." (and a pad byte)
	t.Run("without Rock Ridge", func(t *testing.T) {
		// No SP in ".": the System Use fields mean nothing and are not read.
		_, files, err := readPromptly(t, withSystemUse(t, img, 2, zero))
		if err != nil {
			t.Fatal(err)
		}
		checkFiles(t, files, map[string]string{"user-data": "u", "meta-data": "m"})
	})
	for name, bad := range map[string][]byte{
		"in a file record":            withSystemUse(t, withSystemUse(t, img, 0, sp), 2, zero),
		"in the root record after SP": withSystemUse(t, withSystemUse(t, img, 0, append(bytes.Clone(sp[:7]), zero...)), 3, zero),
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := readPromptly(t, bad)
			if err == nil || !strings.Contains(err.Error(), "length 0") {
				t.Fatalf("err = %v, want one about an entry of length 0", err)
			}
		})
	}
}

// TestReadISO_rockRidgeContinuation: a name spread over a SUSP continuation area, and a
// continuation area that points at itself (bounded, an error).
func TestReadISO_rockRidgeContinuation(t *testing.T) {
	img, err := WriteISO("cidata", map[string][]byte{"a": []byte("x")})
	if err != nil {
		t.Fatal(err)
	}
	sp := []byte{'S', 'P', 7, 1, 0xbe, 0xef, 0, 0}
	ce := func(block, off, n uint32) []byte {
		e := make([]byte, 28)
		copy(e, "CE")
		e[2], e[3] = 28, 1
		both := func(at int, v uint32) {
			binary.LittleEndian.PutUint32(e[at:], v)
			binary.BigEndian.PutUint32(e[at+4:], v)
		}
		both(4, block)
		both(12, off)
		both(20, n)
		return e
	}
	// Block 17 is the terminator descriptor: its bytes 1024.. are zero, free for the test.
	nm := func(flags byte, s string) []byte { return append([]byte{'N', 'M', byte(5 + len(s)), 1, flags}, s...) }
	good := withSystemUse(t, withSystemUse(t, img, 0, sp), 2, append(nm(1, "user-"), ce(17, 1024, 9)...))
	copy(good[17*sector+1024:], nm(0, "data"))
	_, files, err := readPromptly(t, good)
	if err != nil {
		t.Fatal(err)
	}
	checkFiles(t, files, map[string]string{"user-data": "x"})

	loop := withSystemUse(t, withSystemUse(t, img, 0, sp), 2, ce(17, 1024, 28))
	copy(loop[17*sector+1024:], ce(17, 1024, 28))
	if _, _, err := readPromptly(t, loop); err == nil || !strings.Contains(err.Error(), "continuation areas") {
		t.Fatalf("self-referencing CE: err = %v, want one about continuation areas", err)
	}
	outside := withSystemUse(t, withSystemUse(t, img, 0, sp), 2, ce(1<<30, 0, 28))
	if _, _, err := readPromptly(t, outside); err == nil || !strings.Contains(err.Error(), "outside the image") {
		t.Fatalf("CE outside the image: err = %v", err)
	}
}

func TestReadISO_notISO(t *testing.T) {
	for _, b := range [][]byte{nil, make([]byte, 17*sector), bytes.Repeat([]byte{0xff}, 40*sector)} {
		if _, _, err := readPromptly(t, b); err == nil {
			t.Errorf("%d bytes of junk read as an ISO", len(b))
		}
	}
}

// sparse and unsparse encode an image for FuzzReadISO compactly: the 16 sectors of the
// system area (ReadISO never reads them) are left out, and every later sector is a
// 2-byte big-endian length L (at most 2048) and its first L bytes; the rest of the sector
// is zero. An input that ends inside a sector is an image cut there. Our seeds shrink
// from 45 KB to about 1.5 KB this way, which matters: the fuzzer minimizes every new
// input for up to a minute by default, and with raw 45 KB images a 10 s run of make
// fuzz ran some 30 inputs.
func sparse(img []byte) []byte {
	var out []byte
	for off := isoSystemArea; off < len(img); off += sector {
		s := img[off:min(off+sector, len(img))]
		s = bytes.TrimRight(s, "\x00")
		out = binary.BigEndian.AppendUint16(out, uint16(len(s)))
		out = append(out, s...)
	}
	return out
}

func unsparse(in []byte) []byte {
	size := isoSystemArea
	for rest := in; len(rest) >= 2; {
		n := min(int(binary.BigEndian.Uint16(rest)), sector)
		rest = rest[2:]
		if n > len(rest) {
			size += len(rest)
			break
		}
		size += sector
		rest = rest[n:]
	}
	img := make([]byte, size)
	for off := isoSystemArea; len(in) >= 2; off += sector {
		n := min(int(binary.BigEndian.Uint16(in)), sector)
		in = in[2:]
		in = in[copy(img[off:], in[:min(n, len(in))]):]
	}
	return img
}

func TestSparse(t *testing.T) {
	for _, img := range [][]byte{fixture(t, "genisoimage-joliet-rock.iso.gz"), fixture(t, "genisoimage-joliet.iso.gz")} {
		if got := unsparse(sparse(img)); !bytes.Equal(got, img) {
			t.Fatalf("unsparse(sparse(img)) differs: %d bytes, want %d", len(got), len(img))
		}
	}
}

func FuzzReadISO(f *testing.F) {
	seed, _, err := BuildISO(Seed{UserData: "#cloud-config\n", MetaData: "instance-id: x\n", NetworkConfig: ptr("version: 2\n"), VendorData: ptr("v")})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(sparse(seed))
	f.Add(sparse(seed[:36864]))
	f.Add(sparse(fixture(f, "genisoimage-joliet-rock.iso.gz")))
	f.Add(sparse(fixture(f, "genisoimage-joliet.iso.gz")))
	f.Fuzz(func(t *testing.T, in []byte) {
		img := unsparse(in)
		label, files, err := ReadISO(img)
		if err != nil {
			if label != "" || files != nil {
				t.Fatalf("an error (%v) with results", err)
			}
			return
		}
		if len(label) > 32 {
			t.Fatalf("label of %d bytes", len(label))
		}
		// Every file is a record of at least 33 bytes and an extent inside the image.
		if len(files)*(dirRecordMinLen-1) > len(img) {
			t.Fatalf("%d files from %d bytes", len(files), len(img))
		}
		for name, b := range files {
			if len(b) > len(img) {
				t.Fatalf("file %q of %d bytes from a %d-byte image", name, len(b), len(img))
			}
		}
	})
}

// FuzzISORoundTrip: whatever a seed holds, the image BuildISO makes reads back the same.
func FuzzISORoundTrip(f *testing.F) {
	f.Add("#cloud-config\n", "instance-id: x\n", "version: 2\n", true, "", false)
	f.Add("", "", "", false, strings.Repeat("v", 5000), true)
	f.Fuzz(func(t *testing.T, user, meta, network string, withNetwork bool, vendor string, withVendor bool) {
		s := Seed{UserData: user, MetaData: meta}
		want := map[string]string{UserDataFile: user, MetaDataFile: meta}
		if withNetwork {
			s.NetworkConfig = &network
			want[NetworkConfigFile] = network
		}
		if withVendor {
			s.VendorData = &vendor
			want[VendorDataFile] = vendor
		}
		img, _, err := BuildISO(s)
		if err != nil {
			t.Fatal(err)
		}
		label, files, err := ReadISO(img)
		if err != nil {
			t.Fatalf("our own seed does not read back: %v", err)
		}
		if label != VolumeLabel {
			t.Fatalf("label %q", label)
		}
		if len(files) != len(want) {
			t.Fatalf("files %v, want %d", keys(files), len(want))
		}
		for n, w := range want {
			if string(files[n]) != w {
				t.Fatalf("%s = %q, want %q", n, trunc(files[n]), trunc([]byte(w)))
			}
		}
	})
}
