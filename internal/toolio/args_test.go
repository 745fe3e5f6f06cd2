package toolio

import (
	"slices"
	"testing"
)

func TestSplitGetopt(t *testing.T) {
	const opts = "c:dfmS:s:T:V:v:wxzZ:D:?"
	for _, c := range []struct{ in, want []string }{
		{[]string{"p", "-S@08:00", "-T", "@09:00", "a", "b"}, []string{"p", "-S", "@08:00", "-T", "@09:00", "a", "b"}},
		{[]string{"p", "-zs10", "a"}, []string{"p", "-z", "-s", "10", "a"}},
		{[]string{"p", "-dfm", "-c", "cfg"}, []string{"p", "-d", "-f", "-m", "-c", "cfg"}},
		{[]string{"p", "-zS", "+5", "a"}, []string{"p", "-z", "-S", "+5", "a"}},
		{[]string{"p", "--start", "x", "-", "--", "-S1"}, []string{"p", "--start", "x", "-", "--", "-S1"}},
		{[]string{"p", "-help"}, []string{"p", "-help"}}, // not an option letter of getopt's
	} {
		if got := SplitGetopt(c.in, opts); !slices.Equal(got, c.want) {
			t.Errorf("%q: got %q want %q", c.in, got, c.want)
		}
	}
}

func TestPermute(t *testing.T) {
	got := Permute([]string{"p", "a", "-o", "out", "b", "-v"}, map[string]bool{"o": true})
	want := []string{"p", "-o", "out", "-v", "--", "a", "b"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q want %q", got, want)
	}
}
