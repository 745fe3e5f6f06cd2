package folio

import (
	"bytes"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	f := &Folio{Created: "on here at now", Creator: "pcpextract", Archives: []Archive{{"alpha", "/a/b/20240101"}, {"beta.example.com", "/c/d"}}}
	var b bytes.Buffer
	if err := Write(&b, f); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "PCPFolio\nVersion: 1\n") || !strings.Contains(b.String(), "Archive:        alpha                   /a/b/20240101\n") {
		t.Fatalf("layout:\n%s", b.String())
	}
	g, err := Parse("f", &b)
	if err != nil {
		t.Fatal(err)
	}
	if g.Created != f.Created || g.Creator != f.Creator || len(g.Archives) != 2 || g.Archives[1] != f.Archives[1] {
		t.Fatalf("got %+v", g)
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"", "too short"},
		{"PCPFolio\n", "too short"},
		{"NotAFolio\nVersion: 1\n", "f:1: not an archive folio"},
		{"PCPFolio\nVersion: 2\n", "f:2: unsupported folio version"},
		{"PCPFolio\nVersion: 1\nArchive: onlyhost\n", "f:3: an Archive line takes a host and a path"},
		{"PCPFolio\nVersion: 1\n# c\nnonsense\n", "f:4: expected"},
	} {
		_, err := Parse("f", strings.NewReader(c.src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err = %v, want %q", c.src, err, c.want)
		}
	}
	if err := Write(&bytes.Buffer{}, &Folio{Archives: []Archive{{"a b", "/x"}}}); err == nil {
		t.Error("a host with a space was written")
	}
}
