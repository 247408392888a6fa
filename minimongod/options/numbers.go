package options

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// The reasons mongod's NumberParser (src/mongo/base/parse_number.cpp)
// gives when a string is not a number.
const (
	reasonNoDigits      = "No digits"
	reasonOverflow      = "Overflow"
	reasonTrailing      = "Did not consume whole string."
	reasonNoDigitsFound = "Did not consume any digits"
	reasonEmpty         = "Empty string"
	reasonLeadingSpace  = "Leading whitespace"
	reasonOutOfRange    = "Out of range"
)

// parseInt32 parses s as mongod parses an Int option: optional sign, then
// base 0 (0x prefix = hex, leading 0 = octal, else decimal). On failure it
// returns NumberParser's reason.
func parseInt32(s string) (int32, string) {
	neg, mag := splitSign(s)
	base, mag := splitBase(mag)
	if mag == "" {
		return 0, reasonNoDigits
	}
	n, reason := parseMagnitude(mag, base)
	if reason != "" {
		return 0, reason
	}
	limit := uint64(math.MaxInt32)
	if neg {
		limit++
	}
	if n > limit {
		return 0, reasonOverflow
	}
	if neg {
		return int32(-int64(n)), ""
	}
	return int32(n), ""
}

// splitSign strips one leading '+' or '-'.
func splitSign(s string) (bool, string) {
	if s != "" && (s[0] == '-' || s[0] == '+') {
		return s[0] == '-', s[1:]
	}
	return false, s
}

// splitBase detects the base as NumberParser does with base 0.
func splitBase(s string) (uint64, string) {
	if len(s) > 2 && (strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X")) {
		return 16, s[2:]
	}
	if len(s) > 1 && s[0] == '0' {
		return 8, s
	}
	return 10, s
}

// parseMagnitude reads digits of the given base, checking overflow.
func parseMagnitude(s string, base uint64) (uint64, string) {
	var n uint64
	consumed := 0
	for i := 0; i < len(s); i++ {
		d := digitValue(s[i])
		if d >= base {
			break
		}
		if n > (math.MaxUint64-d)/base {
			return 0, reasonOverflow
		}
		n = n*base + d
		consumed++
	}
	if consumed != len(s) {
		return 0, reasonTrailing
	}
	if consumed == 0 {
		return 0, reasonNoDigitsFound
	}
	return n, ""
}

// digitValue maps 0-9, a-z, A-Z to 0..35 and anything else to 36.
func digitValue(c byte) uint64 {
	switch {
	case c >= '0' && c <= '9':
		return uint64(c - '0')
	case c >= 'a' && c <= 'z':
		return uint64(c-'a') + 10
	case c >= 'A' && c <= 'Z':
		return uint64(c-'A') + 10
	}
	return 36
}

// parseDouble parses s as mongod parses a Double option (strtod over the
// whole string). On failure it returns NumberParser's reason.
func parseDouble(s string) (float64, string) {
	if s == "" {
		return 0, reasonEmpty
	}
	if isSpace(s[0]) {
		return 0, reasonLeadingSpace
	}
	f, err := strtod(s)
	if err == nil {
		return f, ""
	}
	if errors.Is(err, strconv.ErrRange) {
		return 0, reasonOutOfRange
	}
	for end := len(s) - 1; end > 0; end-- {
		if _, err := strtod(s[:end]); err == nil || errors.Is(err, strconv.ErrRange) {
			return 0, reasonTrailing
		}
	}
	return 0, reasonNoDigitsFound
}

// strtod parses a complete C floating literal, including hex forms
// without a binary exponent, which strtod accepts and Go does not.
func strtod(s string) (float64, error) {
	if strings.Contains(s, "_") {
		return 0, strconv.ErrSyntax
	}
	f, err := strconv.ParseFloat(s, 64)
	if err == nil || errors.Is(err, strconv.ErrRange) {
		return f, err
	}
	_, mag := splitSign(s)
	lower := strings.ToLower(mag)
	if strings.HasPrefix(lower, "0x") && len(lower) > 2 && !strings.ContainsRune(lower, 'p') {
		return strconv.ParseFloat(s+"p0", 64)
	}
	return f, err
}

// isSpace matches C isspace in the C locale.
func isSpace(c byte) bool {
	return c == ' ' || (c >= '\t' && c <= '\r')
}

// formatDouble prints a double as C++ ostream does by default (%g, 6
// significant digits), as mongod's error messages do.
func formatDouble(f float64) string {
	return strconv.FormatFloat(f, 'g', 6, 64)
}
