package server

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// echoedMax is how many characters of a client's text (a field's name or
// value) an error message quotes back: a 9 MB field name must not make a
// 9 MB answer.
const echoedMax = 64

// echoed is s quoted for a message, cut to its first echoedMax characters
// and said to be cut, with its length, when it is longer.
func echoed(s string) string {
	if utf8.RuneCountInString(s) <= echoedMax {
		return strconv.Quote(s)
	}
	cut, n := s, 0
	for i := range s {
		if n == echoedMax {
			cut = s[:i]
			break
		}
		n++
	}
	return fmt.Sprintf("%s… (cut: %d bytes in all)", strconv.Quote(cut), len(s))
}
