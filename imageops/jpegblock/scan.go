package jpegblock

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

var indexByte = bytes.IndexByte

// lookBits is how many bits the decoder's table resolves at once; longer
// codes take the canonical search.
const lookBits = 11

// eobFlag marks the end-of-block entry of a fastAC table.
const eobFlag = 0x80

// huffTable is one Huffman table, for decoding (lut, maxCode) and encoding
// (code, size by symbol).
type huffTable struct {
	lut [1 << lookBits]uint16 // (length << 8) | symbol, 0 when longer
	// fastAC resolves an AC code and its magnitude bits together when both
	// fit in lookBits: value << 16 | run << 8 | bits used; 0 otherwise.
	// EOB is a run of 64 with eobFlag.
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
		if e != 0 && sym == 0x00 {
			// EOB: a run past the block's end, flagged as not an error.
			t.fastAC[p] = uint32(eobFlag|64)<<8 | uint32(l)
			continue
		}
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
// of the data it reads zeros, as decoders do for a scan cut short; the
// caller decides how much of that is corruption.
//
// acc holds nbits valid bits left-aligned; the bits below them are zero or
// the data that follows (a refill ORs the same bytes in again), so a
// refill is one unaligned load with no loop.
type bitReader struct {
	buf   []byte // padded with 8 zero bytes
	pos   int    // first byte whose bits are not counted in nbits
	acc   uint64
	nbits uint
}

// refill tops acc up to at least 56 valid bits.
func refill(buf []byte, pos int, acc uint64, nbits uint) (int, uint64, uint) {
	if pos >= 0 && pos+8 <= len(buf) {
		acc |= binary.BigEndian.Uint64(buf[pos:]) >> nbits
		return pos + int((63-nbits)>>3), acc, nbits | 56
	}
	return refillTail(buf, pos, acc, nbits)
}

// refillTail is refill within the last 8 bytes and past them (zeros).
func refillTail(buf []byte, pos int, acc uint64, nbits uint) (int, uint64, uint) {
	for nbits <= 56 {
		var b byte
		if pos < len(buf) {
			b = buf[pos]
		}
		pos++
		acc |= uint64(b) << (56 - nbits)
		nbits += 8
	}
	return pos, acc, nbits
}

// bitPos is the offset in bits of the next bit to read.
func (r *bitReader) bitPos() int { return r.pos*8 - int(r.nbits) }

func (r *bitReader) seek(bit int) {
	r.pos, r.acc, r.nbits = refill(r.buf, bit/8, 0, 0)
	if k := uint(bit % 8); k > 0 {
		r.acc <<= k
		r.nbits -= k
	}
}

// slowCode resolves a code longer than lookBits from the top 16 bits of
// acc: its symbol and length, or length 0 for no code.
func (t *huffTable) slowCode(acc uint64) (byte, uint) {
	for l := uint(lookBits + 1); l <= 16; l++ {
		code := int32(acc >> (64 - l))
		if code <= t.maxCode[l] {
			return t.vals[t.valPtr[l]+code], l
		}
	}
	return 0, 0
}

// extend turns an s-bit magnitude (s ≥ 1) into its signed value
// (F.2.2.1), without a branch: the sign of a coefficient is a coin toss
// that a branch predictor loses half the time.
func extend(v int32, s uint) int32 {
	neg := (v - 1<<(s-1)) >> 31 // all ones when v < 2^(s-1)
	return v + neg&(-1<<s+1)
}

// decodeBlock reads one block's quantised coefficients into dst (zigzag
// order, len 64); pred is the component's DC predictor, updated. Only
// dst[:keep] must be zero on entry and is exact on return: past keep, dst
// is scratch (a store without a test is cheaper than the test). The reader's state lives in locals
// for the block: it is the decoder's inner loop.
func (r *bitReader) decodeBlock(dc, ac *huffTable, pred *int32, dst []int16) bool {
	buf, pos, acc, nbits := r.buf, r.pos, r.acc, r.nbits
	if nbits < 32 {
		pos, acc, nbits = refill(buf, pos, acc, nbits)
	}
	// DC: a code of up to 16 bits and up to 11 magnitude bits.
	var s, l uint
	if e := dc.lut[acc>>(64-lookBits)]; e != 0 {
		s, l = uint(e&0xFF), uint(e>>8)
	} else {
		var sym byte
		if sym, l = dc.slowCode(acc); l == 0 {
			return false
		}
		s = uint(sym)
	}
	if s > 11 {
		return false
	}
	acc <<= l
	nbits -= l
	if s > 0 {
		if nbits < s {
			pos, acc, nbits = refill(buf, pos, acc, nbits)
		}
		*pred += extend(int32(acc>>(64-s)), s)
		acc <<= s
		nbits -= s
	}
	if *pred < -32768 || *pred > 32767 {
		return false
	}
	dst = dst[:64]
	dst[0] = int16(*pred)
	ok := true
	for k := 1; k < 64; k++ {
		if nbits < 32 {
			pos, acc, nbits = refill(buf, pos, acc, nbits)
		}
		if e := ac.fastAC[acc>>(64-lookBits)]; e != 0 {
			n := uint(e & 0xFF)
			acc <<= n
			nbits -= n
			k += int(e>>8) & 0x7F
			if k > 63 {
				ok = e>>8&eobFlag != 0
				break
			}
			dst[k] = int16(e >> 16)
			continue
		}
		// A code longer than lookBits, or code and magnitude together
		// longer: at most 16 + 10 bits, which the refill above holds.
		var rs byte
		if e := ac.lut[acc>>(64-lookBits)]; e != 0 {
			rs, l = byte(e), uint(e>>8)
		} else if rs, l = ac.slowCode(acc); l == 0 {
			ok = false
			break
		}
		acc <<= l
		nbits -= l
		run, size := int(rs>>4), uint(rs&15)
		if size == 0 {
			if run == 15 {
				k += 15
				continue
			}
			break // EOB
		}
		k += run
		if k > 63 || size > 10 {
			ok = false
			break
		}
		v := extend(int32(acc>>(64-size)), size)
		acc <<= size
		nbits -= size
		dst[k] = int16(v)
	}
	r.pos, r.acc, r.nbits = pos, acc, nbits
	return ok
}

// readScan unstuffs the entropy-coded data into intervals at RST markers,
// then decodes every MCU once: it records where each starts and its DC
// predictors, and builds the reduced preview from the coefficients.
func (f *File) readScan(at int) error {
	if err := f.unstuff(at); err != nil {
		return err
	}
	return f.decodeAll()
}

// unstuff copies the entropy-coded data from at, without its stuffing and
// markers, into f.scan, one interval per restart interval.
func (f *File) unstuff(at int) error {
	d := f.data
	mcus := f.mcusX * f.mcusY
	f.scan = make([]byte, 0, len(d)-at+16)
	start := at
	next := byte(0) // expected RST number
	p := at
	for {
		i := bytesIndexFF(d, p)
		if i < 0 || i+1 >= len(d) {
			return truncated("the scan has no end (no EOI marker)")
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
	return nil
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
