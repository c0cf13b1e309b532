package imagesource

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
)

// xzFile is a whole, valid xz file holding data in one block of uncompressed LZMA2 chunks,
// whose block header asks for the dictionary of size byte dict (0: 4 KiB ... 40: 4 GiB).
// Made by hand, as no encoder writes a dictionary larger than it needs.
func xzFile(dict byte, data []byte) []byte {
	le32 := func(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
	var f bytes.Buffer
	flags := []byte{0, 1} // CRC32 check
	f.Write([]byte{0xfd, '7', 'z', 'X', 'Z', 0})
	f.Write(flags)
	f.Write(le32(crc32.ChecksumIEEE(flags)))
	hdr := []byte{2, 0, 0x21, 1, dict, 0, 0, 0}
	hdr = append(hdr, le32(crc32.ChecksumIEEE(hdr))...)
	f.Write(hdr)
	packed := 0
	for rest, first := data, true; len(rest) > 0; first = false {
		n := min(len(rest), 1<<16)
		ctl := byte(2)
		if first {
			ctl = 1
		}
		f.Write([]byte{ctl, byte((n - 1) >> 8), byte(n - 1)})
		f.Write(rest[:n])
		packed += 3 + n
		rest = rest[n:]
	}
	f.WriteByte(0)
	packed++
	f.Write(make([]byte, (4-packed%4)%4))
	f.Write(le32(crc32.ChecksumIEEE(data)))
	uvarint := func(v uint64) []byte { return binary.AppendUvarint(nil, v) }
	index := append([]byte{0, 1}, uvarint(uint64(len(hdr)+packed+4))...)
	index = append(index, uvarint(uint64(len(data)))...)
	index = append(index, make([]byte, (4-len(index)%4)%4)...)
	index = append(index, le32(crc32.ChecksumIEEE(index))...)
	f.Write(index)
	foot := append(le32(uint32(len(index)/4-1)), flags...)
	f.Write(le32(crc32.ChecksumIEEE(foot)))
	f.Write(foot)
	f.Write([]byte("YZ"))
	return f.Bytes()
}

// zstdFile is a valid zstd frame holding data in raw blocks, whose window descriptor asks
// for 1<<(10+exp) bytes (exp 21: 2 GiB, what --long=31 writes; 31: 2 TiB), in blocks of 1 KiB.
func zstdFile(exp byte, data []byte) []byte {
	f := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, exp << 3}
	for len(data) > 0 || len(f) == 6 {
		n := min(len(data), 1<<10) // Block_Maximum_Size: the window at least 1 KiB
		last := uint32(0)
		if n == len(data) {
			last = 1
		}
		h := last | uint32(n)<<3
		f = append(f, byte(h), byte(h>>8), byte(h>>16))
		f = append(f, data[:n]...)
		data = data[n:]
	}
	return f
}
