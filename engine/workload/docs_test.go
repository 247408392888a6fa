package workload

import (
	"bytes"
	"compress/flate"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func TestAppendPadDoc(t *testing.T) {
	r := &padRand{s: 1}
	for _, size := range []int{32, 33, 39, 40, 1000, 1024, 4097} {
		doc := bson.Raw(appendPadDoc(nil, 1234567, padBytes(size), r))
		if err := doc.Validate(); err != nil {
			t.Fatalf("size %d: invalid BSON: %v", size, err)
		}
		if len(doc) != size {
			t.Errorf("size %d: document is %d bytes", size, len(doc))
		}
		if id, ok := doc.Lookup("_id").Int64OK(); !ok || id != 1234567 {
			t.Errorf("size %d: _id %v", size, doc.Lookup("_id"))
		}
		if _, data, ok := doc.Lookup("pad").BinaryOK(); !ok || len(data) != size-padDocOverhead {
			t.Errorf("size %d: pad %d bytes, want %d", size, len(data), size-padDocOverhead)
		}
	}
}

func TestFilterAndUpdateDocs(t *testing.T) {
	f := newIDFilter()
	setFilterID(f, -42)
	if got, want := bson.Raw(f).String(), `{"_id": {"$numberLong":"-42"}}`; got != want {
		t.Errorf("filter %s, want %s", got, want)
	}
	r := &padRand{s: 7}
	u, at := newPadUpdate(100, r)
	if err := bson.Raw(u).Validate(); err != nil {
		t.Fatalf("update: invalid BSON: %v", err)
	}
	_, data, ok := bson.Raw(u).Lookup("$set", "pad").BinaryOK()
	if !ok || len(data) != 100 {
		t.Fatalf("update $set.pad: %d bytes, want 100", len(data))
	}
	data = bytes.Clone(data)
	r.fill(u[at : at+100])
	if _, again, _ := bson.Raw(u).Lookup("$set", "pad").BinaryOK(); bytes.Equal(again, data) || !bytes.Equal(again, u[at:at+100]) {
		t.Error("refilling the update's random bytes in place did not change $set.pad")
	}
	ins := appendPadDoc(nil, 0, 50, r)
	setFilterID(ins, 99) // the workload renews inserts this way
	r.fill(ins[padDocOverhead-1 : padDocOverhead-1+50])
	if id, _ := bson.Raw(ins).Lookup("_id").Int64OK(); id != 99 || bson.Raw(ins).Validate() != nil {
		t.Errorf("insert doc after renewal: %v", bson.Raw(ins))
	}
}

// TestPadIsIncompressible checks that many documents together do not
// compress: the bytes must differ from document to document, not only
// within one.
func TestPadIsIncompressible(t *testing.T) {
	r := &padRand{s: 3}
	var buf []byte
	for i := range 1000 {
		buf = appendPadDoc(buf, int64(i), padBytes(1000), r)
	}
	var z bytes.Buffer
	w, _ := flate.NewWriter(&z, flate.BestCompression)
	w.Write(buf)
	w.Close()
	if ratio := float64(z.Len()) / float64(len(buf)); ratio < 0.97 {
		t.Errorf("1000 documents compress to %.2f of their size, want >= 0.97", ratio)
	}
}

func BenchmarkPadFill(b *testing.B) {
	r := &padRand{s: 1}
	buf := make([]byte, 1<<20)
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		r.fill(buf)
	}
}
