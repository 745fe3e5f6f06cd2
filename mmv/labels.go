package mmv

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pcptools/pcptools/stream"
)

// Label sets as pmlogger records them through pmcd and pmdammv:
//
//   - the context set is pmcd's, for a client without credentials (TCP):
//     the JSON files of $PCP_SYSCONF_DIR/labels and labels/optional, then
//     hostname, domainname and machineid (ContextLabels);
//   - domain 70's set is {"agent":"mmv"};
//   - cluster, item and instance-domain sets hold the v3 labels whose
//     flags name that level and whose identity is the cluster (the one
//     pmdammv gives the file), item or instance domain serial; they are
//     recorded only when not empty;
//   - an instances set has one set per instance of the domain, empty ones
//     included, recorded with the instance domain when it differs from the
//     last one recorded.
//
// Each label's JSON is parsed as libpcp parses labels: whitespace outside
// strings dropped, nested objects flattened into dotted names flagged
// compound, names other than letters, digits and '_' left out, a set with
// a name twice rejected. A set's text is rebuilt from its labels in name
// order ("name":value, the full dotted name), a later label winning over
// an earlier one of the same name: what pmlogger records, even for pmcd's
// own hostname/domainname/machineid text, written in another order.

// maxLabelName is libpcp's MAXLABELNAMELEN: names this long are refused.
const maxLabelName = 255

// lab is one parsed label: its full (dotted) name, where its last name
// part and its value lie in the set's text, its flags.
type lab struct {
	name          string
	nameOff, nlen int
	value         string
	valOff        int
	flags         uint8
}

// labset is a parsed label set: its text and labels, sorted by name.
type labset struct {
	json string
	labs []lab
}

var errLabel = errors.New("bad label set")

// parseLabels parses one JSON object of labels, giving each label flags.
// Nested names (a.b) are allowed at the top level only with
// stream.LabelCompound in flags, as libpcp allows them for pmcd's label
// files.
func parseLabels(text string, flags uint8) (labset, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var out bytes.Buffer
	var labs []lab
	var walk func(prefix string, depth int) error
	walk = func(prefix string, depth int) error {
		out.WriteByte('{')
		n := 0
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return err
			}
			name, ok := tok.(string)
			if !ok {
				return errLabel
			}
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return err
			}
			if !validName(name, depth == 0 && flags&stream.LabelCompound != 0) {
				continue // libpcp skips a label with a bad name
			}
			if n > 0 {
				out.WriteByte(',')
			}
			n++
			out.WriteByte('"')
			nameOff := out.Len()
			out.WriteString(name)
			out.WriteString(`":`)
			full := name
			if prefix != "" {
				full = prefix + "." + name
			}
			if r := bytes.TrimSpace(raw); len(r) > 0 && r[0] == '{' {
				sub := json.NewDecoder(bytes.NewReader(r))
				sub.UseNumber()
				saved := dec
				dec = sub
				if _, err := dec.Token(); err != nil {
					return err
				}
				err := walk(full, depth+1)
				dec = saved
				if err != nil {
					return err
				}
				continue
			}
			var c bytes.Buffer
			if err := json.Compact(&c, raw); err != nil {
				return err
			}
			l := lab{name: full, nameOff: nameOff, nlen: len(name), value: c.String(), valOff: out.Len(), flags: flags}
			if depth > 0 {
				l.flags |= stream.LabelCompound
			}
			out.WriteString(l.value)
			labs = append(labs, l)
		}
		if _, err := dec.Token(); err != nil { // the closing brace
			return err
		}
		out.WriteByte('}')
		return nil
	}
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return labset{}, errLabel
	}
	if err := walk("", 0); err != nil {
		return labset{}, errLabel
	}
	if strings.TrimSpace(text[dec.InputOffset():]) != "" {
		return labset{}, errLabel // something after the object
	}
	slices.SortStableFunc(labs, func(a, b lab) int { return strings.Compare(a.name, b.name) })
	for i := 1; i < len(labs); i++ {
		if labs[i].name == labs[i-1].name {
			return labset{}, errLabel
		}
	}
	return labset{json: out.String(), labs: labs}, nil
}

func validName(s string, dots bool) bool {
	if s == "" || len(s) >= maxLabelName {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' && dots) {
			return false
		}
	}
	return true
}

// merge is a and b's labels in name order, b's winning a name both have,
// in a text rebuilt from them: "name":value, the full dotted name.
func merge(a, b labset) labset {
	var all []lab
	i, j := 0, 0
	for i < len(a.labs) || j < len(b.labs) {
		switch {
		case j >= len(b.labs) || i < len(a.labs) && a.labs[i].name < b.labs[j].name:
			all = append(all, a.labs[i])
			i++
		case i >= len(a.labs) || b.labs[j].name < a.labs[i].name:
			all = append(all, b.labs[j])
			j++
		default:
			all = append(all, b.labs[j])
			i++
			j++
		}
	}
	var out strings.Builder
	out.WriteByte('{')
	for k := range all {
		if k > 0 {
			out.WriteByte(',')
		}
		out.WriteByte('"')
		all[k].nameOff, all[k].nlen = out.Len(), len(all[k].name)
		out.WriteString(all[k].name)
		out.WriteString(`":`)
		if all[k].value == "" {
			all[k].value = "null"
		}
		all[k].valOff = out.Len()
		out.WriteString(all[k].value)
	}
	out.WriteByte('}')
	return labset{json: out.String(), labs: all}
}

// one is the set as a stream.OneLabelSet for instance inst, each label's
// flags with or.
func (s labset) one(inst int32, or uint8) stream.OneLabelSet {
	o := stream.OneLabelSet{Inst: inst, NLabels: int32(len(s.labs))}
	if len(s.labs) == 0 {
		return o // libpcp keeps no text for an empty set
	}
	o.JSON = s.json
	for _, l := range s.labs {
		o.Labels = append(o.Labels, stream.LabelEntry{Name: uint16(l.nameOff), NameLen: uint8(l.nlen),
			Flags: l.flags | or, Value: uint16(l.valOff), ValueLen: uint16(len(l.value))})
	}
	return o
}

// sysconfDir is PCP_SYSCONF_DIR, as pmGetConfig gives it.
func sysconfDir() string {
	if d := os.Getenv("PCP_SYSCONF_DIR"); d != "" {
		return d
	}
	return "/etc/pcp"
}

// ContextLabels is the context label set pmcd gives a client that sent
// no credentials (pmlogger connecting over TCP): the labels of the files
// in $PCP_SYSCONF_DIR/labels (flagged compound) and labels/optional (also
// optional), in name order, then hostname, domainname and machineid
// (machineid_sha256 with labels.conf's machineid_hash = sha256), as
// gethostname, getdomainname ("localdomain" for none) and
// /etc/machine-id give them ("localhost", "localmachine" when missing).
func ContextLabels() stream.OneLabelSet {
	conf := sysconfDir()
	var set labset
	add := func(s labset) { set = merge(set, s) }
	for _, dir := range []struct {
		path  string
		flags uint8
	}{{"labels", stream.LabelCompound | uint8(stream.LabelContext)},
		{"labels/optional", stream.LabelCompound | stream.LabelOptional | uint8(stream.LabelContext)}} {
		ents, _ := os.ReadDir(filepath.Join(conf, dir.path))
		for _, e := range ents { // sorted by name, as scandir's alphasort
			if strings.HasPrefix(e.Name(), ".") || e.IsDir() {
				continue
			}
			b, err := os.ReadFile(filepath.Join(conf, dir.path, e.Name()))
			if err != nil {
				continue
			}
			if s, err := parseLabels(string(b), dir.flags); err == nil {
				add(s)
			}
		}
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	domain := "localdomain"
	if b, err := os.ReadFile("/proc/sys/kernel/domainname"); err == nil {
		if d := strings.TrimSpace(string(b)); d != "" && d != "(none)" {
			domain = d
		}
	}
	idName, id := machineID(conf)
	add(hostSet(host, domain, idName, id))
	return set.one(stream.InstNull, 0)
}

// hostSet is pmcd's {"hostname":..,"domainname":..,"machineid":..}.
func hostSet(host, domain, idName, id string) labset {
	var parts []string
	for _, kv := range [][2]string{{"hostname", host}, {"domainname", domain}, {idName, id}} {
		v, _ := json.Marshal(kv[1])
		parts = append(parts, `"`+kv[0]+`":`+string(v))
	}
	s, _ := parseLabels("{"+strings.Join(parts, ",")+"}", uint8(stream.LabelContext))
	return s
}

// machineID is the machine id label's name and value.
func machineID(conf string) (string, string) {
	id := "localmachine"
	if b, err := os.ReadFile("/etc/machine-id"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			id = f[0]
		}
	}
	b, err := os.ReadFile(filepath.Join(conf, "labels.conf"))
	if err != nil {
		return "machineid", id
	}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line == "[global]" {
			continue
		}
		if line[0] == '[' {
			break
		}
		if !strings.HasPrefix(line, "machineid_hash") {
			continue
		}
		v := strings.TrimLeft(line[len("machineid_hash"):], " \t:=")
		if strings.HasPrefix(v, "sha256") {
			sum := sha256.Sum256([]byte(id))
			return "machineid_sha256", hex.EncodeToString(sum[:])
		}
		break
	}
	return "machineid", id
}

// DomainLabels is pmdammv's domain label set, {"agent":"mmv"}.
func DomainLabels() stream.OneLabelSet {
	s, _ := parseLabels(`{"agent":"mmv"}`, uint8(stream.LabelDomain))
	return s.one(stream.InstNull, 0)
}

// fileLabels is the set pmdammv serves for a cluster, item or indom
// label request: the matching labels of the files merged in file order.
// ok is false for none.
func fileLabels(files []loaded, match func(l loaded, lb Label) bool, typ uint32) (stream.OneLabelSet, bool) {
	var set labset
	have := false
	for _, f := range files {
		for _, lb := range f.f.Labels {
			if lb.Flags&typ == 0 || !match(f, lb) {
				continue
			}
			if s, err := parseLabels(lb.JSON, uint8(lb.Flags)); err == nil {
				set, have = merge(set, s), true
			}
		}
	}
	if !have {
		return stream.OneLabelSet{}, false
	}
	return set.one(stream.InstNull, uint8(typ)), true
}

// instanceLabels is one instance's set: the file's instance labels for
// it merged into an empty set, as pmdammv's label callback does.
func instanceLabels(files []loaded, serial uint32, inst int32) stream.OneLabelSet {
	var set labset
	merged := 0
	for _, f := range files {
		for _, lb := range f.f.Labels {
			if lb.Flags&stream.LabelInstances == 0 || lb.Internal != inst || f.cluster<<11|lb.Identity != serial {
				continue
			}
			if s, err := parseLabels(lb.JSON, uint8(lb.Flags)); err == nil {
				set = merge(set, s)
				merged++
			}
		}
	}
	o := set.one(inst, uint8(stream.LabelInstances))
	// pmdammv reports as the set's label count the number of file labels
	// it merged, not of the names they hold, and libpcp_pmda keeps that
	// many entries: a label whose value is an object of two names is one
	// label with its first name, and the JSON text whole. pmlogger records
	// it so (TestMMVRecordMatchesPmlogger), and so does this.
	if merged < len(o.Labels) {
		o.Labels, o.NLabels = o.Labels[:merged], int32(merged)
	}
	return o
}
