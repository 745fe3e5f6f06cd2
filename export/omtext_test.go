package export

import (
	"bytes"
	"fmt"
	"testing"
)

// TestFamilyTextSealed: a family's text, gathered past textChunk several
// times (each chunk compressed as it fills), is written back whole and in
// order, the unsealed rest last.
func TestFamilyTextSealed(t *testing.T) {
	z, err := newTextZ()
	if err != nil {
		t.Fatal(err)
	}
	defer z.close()
	f := &family{z: z}
	var want bytes.Buffer
	for i := 0; i < 20000; i++ {
		line := fmt.Sprintf("kernel_all_load{hostname=\"h\",instname=\"1 minute\",instid=\"%d\"} %d.5 1700000000.%09d\n", i%3, i, i)
		want.WriteString(line)
		f.b = append(f.b, line...)
		if len(f.b) >= textChunk {
			f.seal()
		}
	}
	if len(f.sizes) < 10 || len(f.b) == 0 {
		t.Fatalf("%d chunks sealed, %d bytes left: the test does not cross chunks", len(f.sizes), len(f.b))
	}
	if len(f.sealed) > want.Len()/4 {
		t.Errorf("sealed chunks %d bytes of %d: hardly compressed", len(f.sealed), want.Len())
	}
	var got bytes.Buffer
	if err := f.writeTo(&got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatalf("written back %d bytes, want %d", got.Len(), want.Len())
	}
}
