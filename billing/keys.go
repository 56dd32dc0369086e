package billing

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"math/big"
	"strings"
)

// KeyPrefix starts every API key, so a leaked key is recognisable to
// secret scanners and to people.
const KeyPrefix = "cp_live_"

const (
	keyRandomBytes = 32
	keyBodyLen     = 43 // base62 digits needed for 256 bits
	base62         = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

// newAPIKey returns a fresh key: KeyPrefix and 32 random bytes in base62.
func newAPIKey() string {
	b := make([]byte, keyRandomBytes)
	rand.Read(b) // never fails (crypto/rand since Go 1.24)
	n := new(big.Int).SetBytes(b)
	body := make([]byte, keyBodyLen)
	radix, digit := big.NewInt(62), new(big.Int)
	for i := keyBodyLen - 1; i >= 0; i-- {
		n.DivMod(n, radix, digit)
		body[i] = base62[digit.Int64()]
	}
	return KeyPrefix + string(body)
}

// wellFormed reports whether key has the shape newAPIKey gives; anything
// else is refused before Redis is asked.
func wellFormed(key string) bool {
	body, ok := strings.CutPrefix(key, KeyPrefix)
	if !ok || len(body) != keyBodyLen {
		return false
	}
	for i := 0; i < len(body); i++ {
		if strings.IndexByte(base62, body[i]) < 0 {
			return false
		}
	}
	return true
}

// hashKey returns the hex SHA-256 of key, the only form in which a key is
// stored. A fast hash is right here: a key carries 256 random bits, so there
// is no dictionary to try and nothing for a slow password hash (bcrypt,
// argon2) to protect; it would only cost every request milliseconds.
func hashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// keyID returns the short, non-reversible name of a key hash used in logs
// and as the rate-limit key: the first 16 hex digits (64 bits) of its SHA-256.
func keyID(hash string) string {
	if len(hash) < 16 {
		return ""
	}
	return hash[:16]
}
