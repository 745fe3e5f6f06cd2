package interop

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestRewriteWordsLikePCP: under pmlogrewrite's name, pcprewrite's
// messages are pmlogrewrite's, word for word and in the same order with
// standard output and error in one pipe (its -v summary, on standard
// output, comes out at exit unless -D is given). The configurations are
// those of PCP's QA tests 485, 486, 495, 496, 499, 502 and 797.
func TestRewriteWordsLikePCP(t *testing.T) {
	needPCP(t)
	pcp := "/usr/lib/pcp/bin/pmlogrewrite"
	for _, c := range []struct {
		args    []string // before the archives; CONF is the config file
		config  string
		arch    string // under qaDir
		inPlace bool   // -i on a copy of arch
	}{
		// 485: -v's summary of global changes
		{[]string{"-wv", "-c", "CONF"}, "global { hostname -> foo.bar.com }\n", "archives/541380_v2", false},
		{[]string{"-wv", "-c", "CONF"}, "global {\n    time -> -22:33:24.637\n    hostname -> eek\n    TZ -> \"GMT\"\n}\n", "archives/541380_v2", false},
		// 486: duplicate instances, an OUTPUT instance not in the new indom
		{[]string{"-w", "-c", "CONF"}, "indom 29.2 { inst 300 -> 400 }\n", "archives/mirage", false},
		{[]string{"-w", "-c", "CONF"}, "indom 29.2 { iname \"bin-700\" -> \"bin-900 and some\" }\n", "archives/mirage", false},
		{[]string{"-w", "-c", "CONF"}, "indom 1.5 { iname \"1 minute\" -> \"5\" }\n", "archives/src-rattle", false},
		{[]string{"-w", "-c", "CONF"}, "metric hinv.ndisk { indom -> 1.5 }\n", "archives/src-rattle", false},
		// 495: OUTPUT instances in neither indom, -v's Output line
		{[]string{"-wv", "-c", "CONF"}, "metric sample.mirage { indom -> 29.8 output inst 12345 }\n", "archives/mirage", false},
		{[]string{"-wv", "-c", "CONF"}, "metric sample.colour { indom -> NULL output first }\n", "archives/ok-foo", false},
		// 496: "No change" warnings
		{[]string{"-ws", "-c", "CONF"}, "metric sample.longlong.bin_ctr { type -> 64 }\n", "archives/rewrite", false},
		// 499: -C, warnings of every kind, "No changes"
		{[]string{"-qsvw", "-c", "CONF"}, "metric kernel.all.load { pmid -> 1.2.3 }\nindom 1.2 { inst 0 -> 1 }\nglobal { hostname -> bozo-laptop }\n", "archives/rewrite", false},
		{[]string{"-C", "-c", "CONF"}, "indom 29.2 {\n    # no change ones\n    indom -> 29.2\n    iname \"bin-300\" -> \"bin-300\"\n    inst 800 -> 800\n    # no match ones\n    iname \"bin-999\" -> \"bin-998\"\n    inst 123 -> 456\n}\n", "archives/rewrite", false},
		{[]string{"-C", "-c", "CONF"}, "metric sample.ulonglong.hundred {\n    indom -> NULL\n    name -> sample.ulonglong.hundred\n    pmid -> 29.0.100\n    sem -> instant\n    type -> u64\n    units -> 0,0,0,0,0,0\n}\n", "archives/rewrite", false},
		// 502: a truncated data volume, in place
		{[]string{"-iqsvw", "-c", "CONF"}, "indom 29.1 { iname \"red\" -> \"really red\" }\n", "badarchives/ok-truncbin", true},
		// 481: a specification error on the line pmlogrewrite names
		// (it has read the token after the time), the -v summary of a
		// changed indom with the metrics it adds
		{[]string{"-C", "-c", "CONF"}, "global {\n    hostname -> whizz-bang.engr.sgi.com\n    tz -> \"GMT+10\"\n    time -> 10\n    time -> 11\n}\n", "archives/src-rattle", false},
		{[]string{"-C", "-c", "CONF"}, "indom 1.5 { indom -> 1.10 }\n", "archives/src-rattle", false},
		{[]string{"-C", "-c", "CONF"}, "indom { indom -> 1.10 }\n", "archives/src-rattle", false},
		// 483: metric rules in the summary (newest first), errors in
		// yacc's words and in pmlogrewrite's own (its "iname" slip)
		{[]string{"-C", "-c", "CONF"}, "global {\n    hostname -> whizz-bang.engr.sgi.com\n    tz -> \"GMT+10\"\n    time -> 10\n}\n\nindom 1.5 {\n    indom -> 1.10\n    iname \"15 minute\" -> \"forever\"\n    inst 15 -> 9999\n}\n\nmetric hinv.ndisk {\n    pmid -> 1.2.3\n}\n\nmetric 1.18.3 {\n    pmid -> 4.5.6\n}\n", "archives/src-rattle", false},
		{[]string{"-C", "-c", "CONF"}, "metric 42.42.42 { type->U32 }\n", "archives/src-rattle", false},
		// 483, 1057: a wildcard visits the metrics in the order of
		// libpcp's PMID hash table, newest first
		{[]string{"-w", "-C", "-c", "CONF"}, "metric 1.*.* { type->U32 }\n", "archives/src-rattle", false},
		{[]string{"-w", "-C", "-c", "CONF"}, "metric 1.18.* { type->U32 }\n", "archives/src-rattle", false},
		{[]string{"-w", "-C", "-c", "CONF"}, "metric 60.*.* { type->U32 }\n", "archives/ac15", false},
		{[]string{"-w", "-C", "-c", "CONF"}, "metric hinv.ndisk { type->64 } metric 1.*.* { type->U32 }\n", "archives/src-rattle", false},
		{[]string{"-v", "-c", "CONF"}, "metric 1.*.* { pmid -> 2.*.* }\n", "archives/src-rattle", false},
		{[]string{"-C", "-c", "CONF"}, "metric hinv.ndisk { name -> blah blah blah }\n", "archives/src-rattle", false},
		{[]string{"-C", "-c", "CONF"}, "metric hinv.ndisk { name -> hinv.* }\n", "archives/src-rattle", false},
		{[]string{"-C", "-c", "CONF"}, "metric hinv.ndisk { name -> }\n", "archives/src-rattle", false},
		// warnings of the parser and of the checks on one line
		{[]string{"-C", "-c", "CONF"}, "global { time -> 1:75 }\nmetric 511.1.1 { pmid -> 510.1.1 }\n", "archives/src-rattle", false},
		// -v's order of indoms, metrics and help texts, newest first as
		// pmlogrewrite lists its specs; texts moved with their metrics
		// and indoms; -vv names the rules file, and -C sets the
		// verbosity to 1 wherever it comes (1163's help text summary)
		{[]string{"-C", "-v", "-c", "CONF"}, "metric 2.0.3 { pmid -> 2.0.200 }\nmetric pmcd.numagents { pmid -> 2.0.201 }\nindom 2.1 { indom -> 2.77 }\nindom 2.3 { indom -> 2.78 }\nmetric 70.*.* { pmid -> 70.1.* }\n", "archives/20180415.09.16", false},
		{[]string{"-vv", "-C", "-c", "CONF"}, "indom 2.3 { indom -> 2.78 }\nindom 2.1 { indom -> 2.77 }\n", "archives/20180415.09.16", false},
		{[]string{"-vv", "-c", "CONF"}, "text metric 3.8.* help { text -> \"rewritten\" }\ntext indom 2.1 help { indom -> 2.3 }\ntext indom 2.3 oneline { indom -> 2.1 }\ntext metric 70.*.* * { delete }\n", "archives/20180415.09.16", false},
		// -v's label specs (1349, 1383, 1495's rules and more), newest
		// first: one per label set found in libpcp's label table order,
		// NEW labels gathered per object as pmlogrewrite's new_*_label
		// functions do (a later rule's NEW reusing an earlier spec of
		// the object that names no label), pmPrintLabelSets' lines
		{[]string{"-C", "-v", "-c", "CONF"}, "LABEL ITEM 60.0.20 \"device_type\" { LABEL -> \"new_device_type\" }\nLABEL ITEM 60.0.21 * \"cpu\" { VALUE -> \"new_value\" }\nLABEL ITEM 60.0.22 { LABEL -> \"new_device_type\" }\nLABEL ITEM 60.0.23 { VALUE -> \"new_value\" }\nLABEL ITEM 60.0.34 * { LABEL -> \"new_device_type\" }\nLABEL ITEM 60.0.35 * * { VALUE -> \"new_value\" }\nLABEL ITEM 60.0.53 { NEW \"new_item_label\" \"new_item_value\" }\nLABEL ITEM 60.0.54 { NEW \"new_item_number\" -123.456e+789 }\nLABEL ITEM 60.0.22 { ITEM -> 60.0.127 }\nLABEL ITEM 60.0.24 { DELETE }\nLABEL CONTEXT { NEW \"ctx\" \"v\" }\nLABEL DOMAIN 60 { NEW \"dom\" 1 }\nLABEL CLUSTER 60.0 { LABEL -> \"x\" }\nLABEL INDOM 60.1 { NEW \"in\" \"y\" }\nLABEL INDOM 60.1 { NEW \"in2\" 2 }\nLABEL INSTANCES 60.1 1 { NEW \"inst\" \"z\" }\n", "archives/20180416.10.00", false},
		{[]string{"-C", "-v", "-c", "CONF"}, "LABEL INDOM 60.0 {  }\nLABEL INDOM 60.0 { DELETE }\nLABEL INDOM 60.1 { INDOM -> 60.2 }\nLABEL DOMAIN 3 \"agent\" { LABEL -> \"new_agent\" }\nLABEL DOMAIN 3 * \"proc\" { VALUE -> \"new_value\" }\nLABEL DOMAIN 3 { NEW \"new_domain_label\" \"new_domain_value\" }\nLABEL DOMAIN 60 { NEW \"new_domain_true\" true }\nLABEL INDOM 60.17 { NEW \"new_indom_label\" \"new_indom_value\" }\nLABEL INDOM 60.19 { NEW \"new_indom_number\" -123.456e+789 }\n", "archives/20180416.10.00", false},
		{[]string{"-C", "-v", "-c", "CONF"}, "LABEL INSTANCES 29.2 * { NEW \"x\" 1 }\nLABEL INSTANCES 29.2 200 { NEW \"y\" 2 }\nLABEL INSTANCES 29.2 300 \"bin\" { VALUE -> 3 }\nLABEL INSTANCES 29.2 * \"bin\" 500 { LABEL -> \"bucket\" }\nLABEL CLUSTER 29.0 { NEW \"c\" \"new\" }\nLABEL CLUSTER 29.* { NEW \"d\" \"all\" }\nLABEL CLUSTER 30.0 { DELETE }\nLABEL CONTEXT { NEW \"site\" \"lab\" }\nLABEL CONTEXT \"hostname\" { VALUE -> \"h\" }\nLABEL CONTEXT { NEW \"rack\" 7 }\nLABEL DOMAIN 29 { NEW \"a\" 1 }\nLABEL DOMAIN 29 { NEW \"b\" 2 }\nLABEL DOMAIN 29 { DOMAIN -> 28 }\nLABEL ITEM 29.*.* { NEW \"z\" true }\nLABEL ITEM 29.0.14 { ITEM -> 29.0.99 }\nLABEL INDOM 29.1 { NEW \"q\" null }\nLABEL INDOM 29.* \"model\" { DELETE }\n", "archives/omnibus_v3", false},
		{[]string{"-C", "-v", "-c", "CONF"}, "LABEL ITEM 60.0.* { }\nLABEL ITEM 60.0.20 { NEW \"n1\" 1 }\nLABEL ITEM 60.0.* \"device_type\" { VALUE -> \"core\" }\nLABEL ITEM 60.0.21 { NEW \"n2\" 2 }\nLABEL ITEM 60.*.* * \"cpu\" { DELETE }\nLABEL INSTANCES 60.1 \"sda\" \"device_name\" { VALUE -> \"sdb\" }\nLABEL INSTANCES 60.1 * { LABEL -> \"dev\" }\nLABEL INSTANCES 60.* { NEW \"all\" 0 }\nLABEL INSTANCES 3.39 12404 { DELETE }\nLABEL DOMAIN 60 \"agent\" { DELETE }\nLABEL CONTEXT * \"x\" { DELETE }\nLABEL CONTEXT \"hostname\" { LABEL -> \"host\" }\nLABEL CONTEXT { NEW \"a\" 1 }\nLABEL CONTEXT { NEW \"a\" 2 }\n", "archives/pcp-zeroconf", false},
		// the same rules where the objects are missing: PCP's words for
		// a NEW label with nothing to go to, an instance name not found,
		// an unknown metric name
		{[]string{"-C", "-v", "-c", "CONF"}, "LABEL ITEM kernel.all.cpu.user { DELETE }\nLABEL INSTANCES 60.1 \"sda\" \"device_name\" { VALUE -> \"sdb\" }\nLABEL INSTANCES 29.2 * { NEW \"x\" 1 }\nLABEL CLUSTER 29.* { NEW \"d\" \"all\" }\nLABEL DOMAIN 29 { NEW \"a\" 1 }\nLABEL ITEM 29.*.* { NEW \"z\" true }\nLABEL INDOM 29.1 { NEW \"q\" null }\n", "archives/20180127.08.40", false},
		// label clause errors (a rule that names no label finds any
		// spec of its object, as start_label does), "No change" warnings
		// in the words of each of pmlogrewrite's label rules (not for an
		// INSTANCE clause that changes nothing: pmlogrewrite 6.0.3 frees
		// a string twice there and aborts), an indom change to an indom
		// not in the output, newest spec first
		{[]string{"-C", "-v", "-c", "CONF"}, "LABEL ITEM 60.0.20 \"device_type\" { LABEL -> \"new_device_type\" }\nLABEL ITEM 60.0.21 * \"cpu\" { VALUE -> \"new_value\" }\nLABEL ITEM 60.0.22 { LABEL -> \"new_device_type\" }\nLABEL ITEM 60.0.23 { VALUE -> \"new_value\" }\nLABEL ITEM 60.0.34 * { LABEL -> \"new_device_type\" }\nLABEL ITEM 60.0.35 * * { VALUE -> \"new_value\" }\nLABEL ITEM 60.0.53 { NEW \"new_item_label\" \"new_item_value\" }\nLABEL ITEM 60.0.54 { NEW \"new_item_number\" -123.456e+789 }\nLABEL ITEM 60.0.55 { NEW \"new_item_true\" true }\nLABEL ITEM 60.0.60 { NEW \"new_item_false\" false }\nLABEL ITEM 60.0.78 { NEW \"new_item_null\" null }\nLABEL ITEM 60.0.22 { ITEM -> 60.0.127 }\nLABEL ITEM 60.0.21 { DELETE }\nLABEL CONTEXT { NEW \"ctx\" \"v\" }\nLABEL DOMAIN 60 { NEW \"dom\" 1 }\nLABEL CLUSTER 60.0 { LABEL -> \"x\" }\nLABEL INDOM 60.1 { NEW \"in\" \"y\" }\nLABEL INSTANCES 60.1 1 { NEW \"inst\" \"z\" }\n", "archives/20180416.10.00", false},
		{[]string{"-C", "-v", "-c", "CONF"}, "LABEL ITEM 60.0.20 { DELETE }\nLABEL ITEM 60.0.20 { LABEL -> \"a\" }\n", "archives/20180416.10.00", false},
		{[]string{"-C", "-v", "-c", "CONF"}, "LABEL DOMAIN 60 { LABEL -> \"a\" }\nLABEL DOMAIN 60 { LABEL -> \"b\" }\n", "archives/20180416.10.00", false},
		{[]string{"-C", "-v", "-c", "CONF"}, "LABEL CONTEXT { LABEL -> \"a\" }\nLABEL CONTEXT { DELETE }\n", "archives/20180416.10.00", false},
		{[]string{"-C", "-v", "-c", "CONF"}, "LABEL CONTEXT \"hostname\" { LABEL -> \"hostname\" }\nLABEL DOMAIN 60 \"agent\" { LABEL -> \"agent\" }\nLABEL DOMAIN 60 * \"linux\" { VALUE -> \"linux\" }\nLABEL DOMAIN 60 { DOMAIN -> 60 }\nLABEL ITEM 60.0.20 \"device_type\" { LABEL -> \"device_type\" }\nLABEL ITEM 60.0.21 * \"cpu\" { VALUE -> \"cpu\" }\nLABEL ITEM 60.0.22 { ITEM -> 60.0.22 }\nLABEL INDOM 60.1 { INDOM -> 60.1 }\n", "archives/20180416.10.00", false},
		{[]string{"-C", "-v", "-c", "CONF"}, "LABEL INSTANCES 29.2 * { NEW \"x\" 1 }\nLABEL INSTANCES 29.* { INSTANCES -> 31.* }\nLABEL INDOM 29.1 { NEW \"q\" null }\nLABEL INDOM 29.1 { INDOM -> 29.9 }\n", "archives/omnibus_v3", false},
		// 487: a value the new type cannot hold: pmlogrewrite's error,
		// libpcp's dump of the result it was rewriting (the value set
		// cut short), "not created", or with -d "creation truncated";
		// -Dvalue's trace of each value rescaled and retyped
		{[]string{"-w", "-c", "CONF"}, "metric sample.wrap.longlong { type -> U32 }\n", "archives/kenj-pc-2", false},
		{[]string{"-w", "-c", "CONF"}, "metric sample.wrap.ulonglong { type -> 64 }\n", "archives/kenj-pc-2", false},
		{[]string{"-w", "-c", "CONF"}, "metric pmcd.pmlogger.host { type -> U32 }\n", "archives/sample_expr", false},
		{[]string{"-Dvalue", "-sw", "-c", "CONF"}, "metric sample.drift { units->1,0,-1,MBYTE,0,0 type->U64 }\n", "archives/mirage", false},
		{[]string{"-Dvalue", "-sw", "-c", "CONF"}, "metric sample.mirage { units->1,-1,0,MBYTE,SEC,0 type->U64 }\n", "archives/mirage", false},
		{[]string{"-Dvalue", "-sw", "-c", "CONF"}, "metric sample.mirage { units->1,-1,0,BYTE,SEC,0 type->DOUBLE }\n", "archives/mirage", false},
		{[]string{"-Dvalue", "-dsw", "-c", "CONF"}, "metric sample.wrap.ulonglong { type -> 64 }\nmetric sample.bin { indom -> NULL output first }\n", "archives/kenj-pc-2", false},
		// 1149: -Dpdubuf's report at exit, of no buffers held
		{[]string{"-Dpdubuf", "-c", "CONF"}, "metric hinv.ncpu { name->hinv.number_of_cpus type->U64 }\n", "archives/src-rattle", false},
		// 822: -Dappl1's trace of the metadata changes (the domains'
		// reference counts, descriptors, domains no output metric
		// uses, instances, help texts); a truncated input not in place
		{[]string{"-Dappl1", "-c", "CONF"}, "metric 2.0.3 { delete }\nmetric pmcd.numagents { type -> U64 }\nindom 2.1 { indom -> 2.77 }\n", "archives/20180415.09.16", false},
		{[]string{"-Dappl1", "-c", "CONF"}, "text metric 3.8.* help { text -> \"rewritten\" }\ntext indom 2.1 help { indom -> 2.3 }\ntext indom 2.3 oneline { indom -> 2.1 }\ntext metric 70.*.* * { delete }\n", "archives/20180415.09.16", false},
		{[]string{"-Dappl1", "-c", "CONF"}, "indom 1.17 { indom -> 1.42 }\nmetric hinv.map.xbow { indom -> 1.42 }\nmetric hinv.machine { indom -> 1.17 output iname \"node:2.3\" }\n", "archives/oview-short", false},
		{[]string{"-Dappl1", "-c", "CONF"}, "indom 29.1 { inst 1 -> DELETE iname \"red\" -> \"rouge\" inst 2 -> 20 }\nmetric sample.bin { delete }\n", "archives/ok-bigbin", false},
		{[]string{"-Dappl1", "-c", "CONF"}, "metric sample.colour { indom -> NULL output first }\n", "archives/ok-foo", false},
		{[]string{"-w", "-c", "CONF"}, "indom 29.1 { iname \"red\" -> \"really red\" }\n", "badarchives/ok-truncbin", false},
		// archives libpcp will not open: libpcp's words (ours, until
		// the twenty-first session): no such archive, a bad .index
		// label, damaged metadata
		{[]string{"-c", "CONF"}, "global { hostname -> elsewhere }\n", "archives/nothere", false},
		{[]string{"-c", "CONF"}, "global { hostname -> elsewhere }\n", "badarchives/badlabel-2", false},
		{[]string{"-c", "CONF"}, "global { hostname -> elsewhere }\n", "badarchives/badlen-9", false},
		{[]string{"-c", "CONF"}, "global { hostname -> elsewhere }\n", "badarchives/badmeta-3", false},
		{[]string{"-c", "CONF"}, "global { hostname -> elsewhere }\n", "badarchives/badmeta-5", false},
		// a record cut short, a length of 0: where libpcp's file
		// descriptor is when pmlogrewrite reports it (the end of the
		// file, until the twenty-first session)
		{[]string{"-c", "CONF"}, "global { hostname -> elsewhere }\n", "badarchives/badlen-2", false},
		{[]string{"-c", "CONF"}, "global { hostname -> elsewhere }\n", "badarchives/badlog-1", false},
		{[]string{"-c", "CONF"}, "global { hostname -> elsewhere }\n", "badarchives/archive-20150417.131733", false},
		// a record whose header and trailer lengths disagree (our own
		// words, until the twenty-first session), and in place
		{[]string{"-c", "CONF"}, "global { hostname -> elsewhere }\n", "badarchives/badlen-1", false},
		{[]string{"-i", "-c", "CONF"}, "global { hostname -> elsewhere }\n", "badarchives/badlen-1", true},
		// 797: the dynamic domain warning, without -w
		{[]string{"-c", "CONF"}, "metric 511.2048.1 { pmid -> 510.2048.1 }\n", "archives/log-derived", false},
	} {
		run := func(prog, tag string) (string, int) {
			dir := t.TempDir()
			conf := filepath.Join(dir, "CONF")
			if err := os.WriteFile(conf, []byte(c.config), 0o644); err != nil {
				t.Fatal(err)
			}
			args := append([]string(nil), c.args...)
			for i, a := range args {
				if a == "CONF" {
					args[i] = conf
				}
			}
			in := filepath.Join(filepath.Dir(qaDir), c.arch) // the QA directory
			if c.inPlace {
				files, _ := filepath.Glob(in + ".*")
				for _, f := range files {
					b, err := os.ReadFile(f)
					if err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				in = filepath.Join(dir, filepath.Base(c.arch))
				args = append(args, in)
			} else {
				args = append(args, in, filepath.Join(dir, "OUT"))
			}
			out, code := combined(t, prog, args...)
			out = strings.ReplaceAll(out, dir, "TMP")
			return out, code
		}
		theirs, tcode := run(pcp, "pcp")
		mine, mcode := run(ours("pmlogrewrite"), "ours")
		// PCP's own QA filters the offset its stdio reports (502).
		offset := regexp.MustCompile(`offset 204[0-9]{3}`)
		theirs = offset.ReplaceAllString(theirs, "offset 204XXX")
		mine = offset.ReplaceAllString(mine, "offset 204XXX")
		// -Dpdubuf: libpcp traces each of its PDU buffer operations,
		// which have no counterpart here; 1149 compares the report of
		// the buffers still held at the end, which it cuts out so
		if slices.Contains(c.args, "-Dpdubuf") {
			cut := func(s string) string {
				if i := strings.Index(s, "__pmFindPDUBuf(DEBUG)"); i >= 0 {
					return s[i:]
				}
				return s
			}
			theirs, mine = cut(theirs), cut(mine)
		}
		// and the address of a result libpcp dumps (487)
		dumped := regexp.MustCompile(`(pmResult dump) from .* numpmid`)
		theirs = dumped.ReplaceAllString(theirs, "$1 ... numpmid")
		mine = dumped.ReplaceAllString(mine, "$1 ... numpmid")
		if mine != theirs || mcode != tcode {
			t.Errorf("%v %q on %s: exit %d, output\n%s\nwant exit %d, output\n%s", c.args, c.config, c.arch, mcode, mine, tcode, theirs)
		}
	}
}
