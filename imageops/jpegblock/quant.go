package jpegblock

// Quantisation tables: reading a file's (ReadDQT), and the IJG (libjpeg)
// tables, which Encode writes and Quality measures a file's against.

// stdLuminanceQuant is the IJG (libjpeg) luminance table at quality 50, in
// zigzag order; every mainstream encoder scales it for other qualities.
var stdLuminanceQuant = [64]uint16{
	16, 11, 12, 14, 12, 10, 16, 14, 13, 14, 18, 17, 16, 19, 24, 40,
	26, 24, 22, 22, 24, 49, 35, 37, 29, 40, 58, 51, 61, 60, 57, 51,
	56, 55, 64, 72, 92, 78, 64, 68, 87, 69, 55, 56, 80, 109, 81, 87,
	95, 98, 103, 104, 103, 62, 77, 113, 121, 112, 100, 120, 92, 101, 103, 99,
}

// stdChrominanceQuant is the IJG chrominance table at quality 50, in
// zigzag order.
var stdChrominanceQuant = [64]uint16{
	17, 18, 18, 24, 21, 24, 47, 26, 26, 47, 99, 66, 56, 66, 99, 99,
	99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99,
	99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99,
	99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99,
}

// ijgTable is std as libjpeg (and Go's image/jpeg) writes it at quality q:
// scale 5000/q below 50, 200−2q from 50, each entry (std×scale+50)/100
// clamped to 1..limit.
func ijgTable(std *[64]uint16, q int, limit int) [64]int {
	scale := 200 - 2*q
	if q < 50 {
		scale = 5000 / q
	}
	var t [64]int
	for i, s := range std {
		t[i] = min(max((int(s)*scale+50)/100, 1), limit)
	}
	return t
}

// Quality returns the IJG quality (1..100) whose luminance table is
// closest to the luminance table t (zigzag order, as stored; 16-bit
// entries when precision is 1), by the sum of absolute differences over
// the 64 entries. For files written by libjpeg, Go, Photoshop's "save for web" or
// most cameras' IJG-style tables this recovers the quality exactly or
// within a few steps; for encoders with their own table shapes (some
// phones) it is the IJG quality that quantises about as coarsely. Callers
// clamp it to the range they are willing to write.
func Quality(t [64]uint16, precision int) int {
	limit := 255
	if precision == 1 {
		limit = 32767
	}
	best, bestDiff := 0, -1
	for q := 1; q <= 100; q++ {
		ref := ijgTable(&stdLuminanceQuant, q, limit)
		diff := 0
		for i, v := range t {
			d := int(v) - ref[i]
			if d < 0 {
				d = -d
			}
			diff += d
		}
		if bestDiff < 0 || diff < bestDiff {
			best, bestDiff = q, diff
		}
	}
	return best
}

// ReadDQT parses the tables of one DQT segment (after its length), calling
// each with a table's id (0..3), its precision (0: 8-bit entries, 1:
// 16-bit) and its entries in zigzag order, as stored. A malformed segment
// is invalid_params; each's error stops the walk and is returned.
func ReadDQT(seg []byte, each func(id, precision int, q *[64]uint16) error) error {
	for len(seg) > 0 {
		pq, tq := int(seg[0]>>4), int(seg[0]&15)
		if pq > 1 || tq > 3 {
			return corrupt("bad DQT table %#02x", seg[0])
		}
		size := 64 << pq
		if len(seg) < 1+size {
			return corrupt("short DQT segment")
		}
		var q [64]uint16
		for i := range q {
			if pq == 0 {
				q[i] = uint16(seg[1+i])
			} else {
				q[i] = uint16(seg[1+2*i])<<8 | uint16(seg[2+2*i])
			}
		}
		if err := each(tq, pq, &q); err != nil {
			return err
		}
		seg = seg[1+size:]
	}
	return nil
}
