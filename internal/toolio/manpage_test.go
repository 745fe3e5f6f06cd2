package toolio

import (
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestManPage: the man page shows the name, the usage lines kept literal,
// and each visible option with its names (short first), its value's name
// and its text; hidden options are left out.
func TestManPage(t *testing.T) {
	app := &cli.App{
		Name:      "pcpthing",
		Usage:     "does a thing",
		UsageText: "pcpthing [options] A\n.starts with a dot\n  pcpthing -o OUT A",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "(`PREFIX`) write to PREFIX"},
			&cli.BoolFlag{Name: "no-sync", Usage: `do not sync \ at all`},
			&cli.IntFlag{Name: "n", Usage: "count"},
			&cli.BoolFlag{Name: "secret", Hidden: true, Usage: "not shown"},
		},
	}
	got := manPage(app)
	for _, want := range []string{
		".TH PCPTHING 1\n.SH NAME\npcpthing \\- does a thing\n",
		".SH SYNOPSIS\n.nf\npcpthing [options] A\n\\&.starts with a dot\npcpthing -o OUT A\n.fi\n",
		".TP\n\\fB\\-n\\fR \\fIvalue\\fR\ncount\n",
		".TP\n\\fB\\-\\-no\\-sync\\fR\ndo not sync \\e at all\n",
		".TP\n\\fB\\-o\\fR, \\fB\\-\\-output\\fR \\fIPREFIX\\fR\nwrite to PREFIX\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("man page lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "secret") {
		t.Errorf("a hidden option is shown:\n%s", got)
	}
	if i, j := strings.Index(got, "no\\-sync"), strings.Index(got, "\\-\\-output"); i > j {
		t.Errorf("options not in name order:\n%s", got)
	}
}
