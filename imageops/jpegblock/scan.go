package jpegblock

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

var indexByte = bytes.IndexByte

// lookBits is how many bits the decoder's table resolves at once; longer
// codes take the canonical search.
const lookBits = 9

// huffTable is one Huffman table, for decoding (lut, maxCode) and encoding
// (code, size by symbol).
type huffTable struct {
	lut [1 << lookBits]uint16 // (length << 8) | symbol, 0 when longer
	// fastAC resolves an AC code and its magnitude bits together when both
	// fit in lookBits: value << 16 | run << 8 | bits used; 0 otherwise.
	fastAC  [1 << lookBits]uint32
	maxCode [18]int32 // largest code of each length, -1 none
	valPtr  [17]int32 // index in vals of each length's first code, minus that code
	vals    []byte
	code    [256]uint16
	size    [256]uint8 // 0: symbol not in the table
}

func newHuffTable(counts [16]int, vals []byte) (*huffTable, error) {
	t := &huffTable{vals: append([]byte(nil), vals...)}
	code, k := int32(0), 0
	for l := 1; l <= 16; l++ {
		n := counts[l-1]
		t.valPtr[l] = int32(k) - code
		if n == 0 {
			t.maxCode[l] = -1
		}
		for range n {
			s := vals[k]
			if t.size[s] != 0 {
				return nil, corrupt("Huffman table repeats symbol %#02x", s)
			}
			t.code[s], t.size[s] = uint16(code), uint8(l)
			if l <= lookBits {
				for j := range 1 << (lookBits - l) {
					t.lut[int(code)<<(lookBits-l)|j] = uint16(l)<<8 | uint16(s)
				}
			}
			code++
			k++
		}
		if n > 0 {
			t.maxCode[l] = code - 1
		}
		if code > 1<<l {
			return nil, corrupt("Huffman table has too many codes of length %d", l)
		}
		code <<= 1
	}
	t.maxCode[17] = 1<<30 - 1 // sentinel: no code is longer than 16 bits
	for p, e := range t.lut {
		l, sym := uint(e>>8), e&0xFF
		run, size := uint(sym>>4), uint(sym&15)
		if e == 0 || size == 0 || l+size > lookBits {
			continue
		}
		v := int32(p>>(lookBits-l-size)) & (1<<size - 1)
		if v < 1<<(size-1) {
			v += -1<<size + 1
		}
		t.fastAC[p] = uint32(uint16(int16(v)))<<16 | uint32(run)<<8 | uint32(l+size)
	}
	return t, nil
}

// bitReader reads unstuffed entropy-coded bits, MSB first. Past the end
// of the data it reads zeros, counting them, as decoders do for a scan
// cut short; the caller decides how much of that is corruption.
type bitReader struct {
	buf   []byte // padded with 8 zero bytes
	pos   int    // next byte to load
	acc   uint64 // bits left-aligned
	nbits uint
}

func (r *bitReader) fill() {
	if r.pos+8 <= len(r.buf) {
		// Load whole bytes at once: as many as fit.
		v := binary.BigEndian.Uint64(r.buf[r.pos:])
		take := (63 - r.nbits) / 8
		r.acc |= (v >> (64 - 8*take)) << (64 - 8*take - r.nbits)
		r.nbits += 8 * take
		r.pos += int(take)
		return
	}
	for r.nbits <= 56 {
		var b byte
		if r.pos < len(r.buf) {
			b = r.buf[r.pos]
		}
		r.pos++
		r.acc |= uint64(b) << (56 - r.nbits)
		r.nbits += 8
	}
}

// bitPos is the offset in bits of the next bit to read.
func (r *bitReader) bitPos() int { return r.pos*8 - int(r.nbits) }

func (r *bitReader) seek(bit int) {
	r.pos, r.acc, r.nbits = bit/8, 0, 0
	r.fill()
	if k := uint(bit % 8); k > 0 {
		r.acc <<= k
		r.nbits -= k
	}
}

func (r *bitReader) decode(t *huffTable) (byte, bool) {
	if r.nbits < 16 {
		r.fill()
	}
	if e := t.lut[r.acc>>(64-lookBits)]; e != 0 {
		l := uint(e >> 8)
		r.acc <<= l
		r.nbits -= l
		return byte(e), true
	}
	code := int32(r.acc >> (64 - lookBits))
	for l := lookBits + 1; l <= 16; l++ {
		code = int32(r.acc >> (64 - uint(l)))
		if code <= t.maxCode[l] {
			r.acc <<= uint(l)
			r.nbits -= uint(l)
			return t.vals[t.valPtr[l]+code], true
		}
	}
	return 0, false
}

// receive reads an s-bit magnitude and extends its sign (F.2.2.1).
func (r *bitReader) receive(s uint) int32 {
	if s == 0 {
		return 0
	}
	if r.nbits < s {
		r.fill()
	}
	v := int32(r.acc >> (64 - s))
	r.acc <<= s
	r.nbits -= s
	if v < 1<<(s-1) {
		v += -1<<s + 1
	}
	return v
}

// decodeBlock reads one block's quantised coefficients into dst (zigzag
// order, len 64, zero on entry), keeping only the first keep; pred is the
// component's DC predictor, updated.
func (r *bitReader) decodeBlock(dc, ac *huffTable, pred *int32, dst []int16, keep int) bool {
	s, ok := r.decode(dc)
	if !ok || s > 11 {
		return false
	}
	*pred += r.receive(uint(s))
	if *pred < -32768 || *pred > 32767 {
		return false
	}
	dst = dst[:64]
	dst[0] = int16(*pred)
	for k := 1; k < 64; k++ {
		if r.nbits < 16 {
			r.fill()
		}
		if e := ac.fastAC[r.acc>>(64-lookBits)]; e != 0 {
			n := uint(e & 0xFF)
			r.acc <<= n
			r.nbits -= n
			k += int(e>>8) & 15
			if k > 63 {
				return false
			}
			if k < keep {
				dst[k] = int16(e >> 16)
			}
			continue
		}
		rs, ok := r.decode(ac)
		if !ok {
			return false
		}
		run, size := int(rs>>4), uint(rs&15)
		if size == 0 {
			if run == 15 {
				k += 15
				continue
			}
			return true // EOB
		}
		k += run
		if k > 63 || size > 10 {
			return false
		}
		v := r.receive(size)
		if k < keep {
			dst[k] = int16(v)
		}
	}
	return true
}

// readScan unstuffs the entropy-coded data into intervals at RST markers,
// then decodes every MCU once: it records where each starts and its DC
// predictors, and builds the reduced preview from the coefficients.
func (f *File) readScan(at int) error {
	d := f.data
	mcus := f.mcusX * f.mcusY
	f.scan = make([]byte, 0, len(d)-at+16)
	start := at
	next := byte(0) // expected RST number
	p := at
	for {
		i := bytesIndexFF(d, p)
		if i < 0 || i+1 >= len(d) {
			return corrupt("the scan has no end (no EOI marker)")
		}
		m := d[i+1]
		if m == 0x00 {
			p = i + 2
			continue
		}
		if m == 0xFF {
			p = i + 1
			continue
		}
		f.addInterval(start, i)
		if m >= 0xD0 && m <= 0xD7 {
			if m-0xD0 != next {
				return corrupt("restart markers out of order")
			}
			next = (next + 1) & 7
			start, p = i+2, i+2
			continue
		}
		if m != 0xD9 {
			return unsupported(fmt.Sprintf("marker %#02x after the first scan (several scans or DNL)", m))
		}
		break
	}
	f.scan = append(f.scan, make([]byte, 8)...)
	want := 1
	if f.restart > 0 {
		want = (mcus + f.restart - 1) / f.restart
	}
	if len(f.inter) != want {
		return corrupt("the scan has %d restart intervals, the header implies %d", len(f.inter), want)
	}
	return f.decodeAll()
}

// addInterval unstuffs data[start:end] onto f.scan: a stuffed 0xFF 0x00
// is the data byte 0xFF; 0xFF fill bytes before a marker are not data.
func (f *File) addInterval(start, end int) {
	bitStart := uint32(len(f.scan) * 8)
	d := f.data[start:end]
	for len(d) > 0 {
		i := indexByte(d, 0xFF)
		if i < 0 {
			f.scan = append(f.scan, d...)
			break
		}
		if i+1 < len(d) && d[i+1] == 0x00 {
			f.scan = append(f.scan, d[:i+1]...)
			d = d[i+2:]
			continue
		}
		f.scan = append(f.scan, d[:i]...)
		d = d[i+1:]
	}
	f.inter = append(f.inter, interval{start: start, end: end, bitStart: bitStart, bitEnd: uint32(len(f.scan) * 8)})
}

// bytesIndexFF is the index of the first 0xFF in d at or after p, or -1.
func bytesIndexFF(d []byte, p int) int {
	if p >= len(d) {
		return -1
	}
	if i := indexByte(d[p:], 0xFF); i >= 0 {
		return p + i
	}
	return -1
}
