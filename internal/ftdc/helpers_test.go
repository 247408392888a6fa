package ftdc

import (
	"os"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t testing.TB, from, to string) { writeFile(t, to, readFile(t, from)) }

func mustMarshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := bson.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mustDecimal returns the 16 BSON bytes of the decimal128 s.
func mustDecimal(t testing.TB, s string) []byte {
	t.Helper()
	d, err := bson.ParseDecimal128(s)
	if err != nil {
		t.Fatal(err)
	}
	raw := mustMarshal(t, bson.D{{Key: "d", Value: d}})
	return raw[4+1+2 : 4+1+2+16]
}
