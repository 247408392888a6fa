package engine

import "testing"

func TestParseAndFormatBytes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		text string
	}{
		{"256MiB", 256 << 20, "256 MiB"},
		{"2GiB", 2 << 30, "2 GiB"},
		{"1.5G", 3 << 29, "1.5 GiB"},
		{"512 M", 512 << 20, "512 MiB"},
		{"1GB", 1000 * 1000 * 1000, "953.67 MiB"},
		{"4096", 4096, "4 KiB"},
		{"300B", 300, "300 bytes"},
	} {
		got, err := ParseBytes(tc.in)
		if err != nil || got != tc.want || FormatBytes(got) != tc.text {
			t.Errorf("ParseBytes(%q) = %d, %v (%s), want %d (%s)", tc.in, got, err, FormatBytes(got), tc.want, tc.text)
		}
	}
	for _, bad := range []string{"", "lots", "-1GiB", "0", "2 PiB", "1e30G"} {
		if n, err := ParseBytes(bad); err == nil {
			t.Errorf("ParseBytes(%q) = %d, want an error", bad, n)
		}
	}
}
