package codec

import (
	"bytes"
	"context"
	"encoding/binary"
	"image"
	"image/jpeg"
	"testing"

	"carphoto"
)

// tiff returns a TIFF block in byte order bo whose IFD0 holds entries
// (tag, type, value) in that order, each with count 1.
func tiff(bo binary.AppendByteOrder, entries ...[3]uint32) []byte {
	b := []byte("MM")
	if bo == binary.AppendByteOrder(binary.LittleEndian) {
		b = []byte("II")
	}
	b = bo.AppendUint16(b, 42)
	b = bo.AppendUint32(b, 8)
	b = bo.AppendUint16(b, uint16(len(entries)))
	for _, e := range entries {
		b = bo.AppendUint16(b, uint16(e[0]))
		b = bo.AppendUint16(b, uint16(e[1]))
		b = bo.AppendUint32(b, 1)
		if e[1] == 3 { // SHORT: left-justified in the 4-byte value field
			b = bo.AppendUint16(b, uint16(e[2]))
			b = append(b, 0, 0)
		} else {
			b = bo.AppendUint32(b, e[2])
		}
	}
	return bo.AppendUint32(b, 0)
}

func TestEXIFOrientation(t *testing.T) {
	be, le := binary.BigEndian, binary.LittleEndian
	withCount := func(b []byte, n uint16) []byte {
		b = append([]byte{}, b...)
		binary.BigEndian.PutUint16(b[8:], n)
		return b
	}
	tests := []struct {
		name string
		tiff []byte
		want int
	}{
		{"big-endian SHORT", tiff(be, [3]uint32{0x0112, 3, 6}), 6},
		{"little-endian SHORT", tiff(le, [3]uint32{0x0112, 3, 8}), 8},
		{"LONG", tiff(le, [3]uint32{0x0112, 4, 3}), 3},
		{"after other tags", tiff(be, [3]uint32{0x010F, 2, 0}, [3]uint32{0x0110, 2, 0}, [3]uint32{0x0112, 3, 5}), 5},
		{"with Exif prefix", append([]byte("Exif\x00\x00"), tiff(be, [3]uint32{0x0112, 3, 7})...), 7},
		{"value 0", tiff(be, [3]uint32{0x0112, 3, 0}), 1},
		{"value 9", tiff(be, [3]uint32{0x0112, 3, 9}), 1},
		{"no orientation tag", tiff(be, [3]uint32{0x010F, 2, 0}), 1},
		{"count beyond the data", withCount(tiff(be, [3]uint32{0x010F, 2, 0}), 5000), 1},
		{"IFD offset beyond the data", append([]byte("MM\x00\x2a\xff\xff\xff\xf0"), make([]byte, 20)...), 1},
		{"not TIFF", []byte("hello, world, not tiff"), 1},
		{"empty", nil, 1},
	}
	for _, tc := range tests {
		if got := exifOrientation(tc.tiff); got != tc.want {
			t.Errorf("%s: orientation %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestJPEGICCChunksJoinInSequenceOrder(t *testing.T) {
	app2 := func(seq, count byte, data string) []byte {
		body := append(append([]byte("ICC_PROFILE\x00"), seq, count), data...)
		n := len(body) + 2
		return append([]byte{0xFF, 0xE2, byte(n >> 8), byte(n)}, body...)
	}
	// SOI, the chunks, a minimal scan, EOI.
	file := func(segs ...[]byte) []byte {
		b := []byte{0xFF, 0xD8}
		for _, s := range segs {
			b = append(b, s...)
		}
		return append(b, 0xFF, 0xDA, 0, 8, 1, 1, 0, 0, 63, 0, 0x12, 0x34, 0xFF, 0xD9)
	}
	tests := []struct {
		name string
		data []byte
		want []byte
	}{
		{"in order", file(app2(1, 3, "one-"), app2(2, 3, "two-"), app2(3, 3, "three")), []byte("one-two-three")},
		{"out of order", file(app2(3, 3, "three"), app2(1, 3, "one-"), app2(2, 3, "two-")), []byte("one-two-three")},
		{"a chunk missing", file(app2(1, 3, "one-"), app2(3, 3, "three")), nil},
		{"counts disagree", file(app2(1, 2, "one-"), app2(2, 3, "two-")), nil},
		{"sequence 0", file(app2(0, 1, "zero")), nil},
	}
	for _, tc := range tests {
		var h header
		if err := readJPEGMeta(tc.data, &h); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !bytes.Equal(h.icc, tc.want) {
			t.Errorf("%s: profile %q, want %q", tc.name, h.icc, tc.want)
		}
	}
}

// A malformed DQT segment is invalid_params saying so, whichever reader
// meets it first: the header walk's message is the block parser's.
func TestBadDQTIsInvalidParams(t *testing.T) {
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, image.NewGray(image.Rect(0, 0, 16, 16)), nil); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	at := bytes.Index(good, []byte{0xFF, 0xDB})
	if at < 0 {
		t.Fatal("no DQT segment")
	}
	for _, tc := range []struct {
		name string
		edit func(d []byte)
		want string
	}{
		{"bad table id", func(d []byte) { d[at+4] = 0x24 }, "image data is corrupt: bad DQT table 0x24"},
		{"short segment", func(d []byte) { d[at+3] = 10 }, "image data is corrupt: short DQT segment"},
	} {
		d := bytes.Clone(good)
		tc.edit(d)
		_, err := Decode(context.Background(), d, Limits{})
		if carphoto.ErrorCode(err) != carphoto.EInvalidParams || carphoto.ErrorMessage(err) != tc.want {
			t.Errorf("%s: error %v (%s), want invalid_params %q", tc.name, err, carphoto.ErrorCode(err), tc.want)
		}
	}
}
