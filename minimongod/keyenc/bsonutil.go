package keyenc

import (
	"encoding/binary"
	"strconv"
)

// pad returns data extended with zeros to at least n bytes.
func pad(data []byte, n int) []byte {
	if len(data) >= n {
		return data
	}
	return append(append([]byte{}, data...), make([]byte, n-len(data))...)
}

// fixed64 reads a little-endian uint64, zero-padding short input.
func fixed64(data []byte) uint64 { return binary.LittleEndian.Uint64(pad(data, 8)) }

func parseFloat(s string) (float64, error) { return strconv.ParseFloat(s, 64) }
