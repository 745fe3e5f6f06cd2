package dump

import (
	"strings"

	"github.com/pcptools/pcptools/stream"
)

// nameSpace is the archive's metric namespace as libpcp builds it from the
// descriptor records. Its shape decides two things pmdumplog prints: the
// order of a metric's several names ("a or b or c"), and the order in
// which a non-leaf name given on the command line expands to metrics.
//
// libpcp adds names one at a time. A name's path is followed from the root
// as far as nodes exist; the first missing component is pushed on the
// front of its parent's child list and the rest hang below it. A name that
// already exists with another PMID is dropped. When all names are in, a
// depth-first walk (children in list order) pushes every leaf on the front
// of its PMID's chain, so a metric's names come out in reverse walk order.
type nameSpace struct {
	root   pmnsNode
	byPMID map[stream.PMID][]string // names in pmNameAll order
}

type pmnsNode struct {
	name   string
	pmid   stream.PMID // stream.PMIDNull for an inner node
	first  *pmnsNode   // first child
	next   *pmnsNode   // next sibling
	parent *pmnsNode
}

func newNameSpace() *nameSpace {
	return &nameSpace{root: pmnsNode{pmid: stream.PMIDNull}}
}

// add inserts name for pmid. A name is a C string to libpcp: it ends at
// the first NUL (some old archives pad names with them).
func (ns *nameSpace) add(pmid stream.PMID, name string) {
	if i := strings.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	np := &ns.root
	rest := name
	for {
		comp, tail, more := strings.Cut(rest, ".")
		var c *pmnsNode
		for c = np.first; c != nil; c = c.next {
			if c.name == comp {
				break
			}
		}
		if c == nil {
			// Create the rest of the path; only its first node joins an
			// existing child list.
			parent := np
			for i := 0; ; i++ {
				n := &pmnsNode{name: comp, pmid: stream.PMIDNull, parent: parent}
				if i == 0 {
					n.next = parent.first
				}
				parent.first = n
				parent = n
				if !more {
					break
				}
				comp, tail, more = strings.Cut(tail, ".")
			}
			parent.pmid = pmid
			return
		}
		if !more {
			// An existing node: nothing changes, whether or not the PMID
			// agrees (libpcp reports the conflict and carries on).
			return
		}
		np = c
		rest = tail
	}
}

// finish builds the PMID to names index, as libpcp's backlink pass does.
func (ns *nameSpace) finish() {
	ns.byPMID = map[stream.PMID][]string{}
	var walk func(n *pmnsNode, prefix string)
	walk = func(n *pmnsNode, prefix string) {
		for c := n.first; c != nil; c = c.next {
			full := c.name
			if prefix != "" {
				full = prefix + "." + c.name
			}
			if c.pmid != stream.PMIDNull {
				ns.byPMID[c.pmid] = append(ns.byPMID[c.pmid], full)
			}
			walk(c, full)
		}
	}
	walk(&ns.root, "")
	for p, names := range ns.byPMID {
		for i, j := 0, len(names)-1; i < j; i, j = i+1, j-1 {
			names[i], names[j] = names[j], names[i]
		}
		ns.byPMID[p] = names
	}
}

// locate returns the node for a full name, or nil.
func (ns *nameSpace) locate(name string) *pmnsNode {
	np := &ns.root
	rest := name
	for {
		comp, tail, more := strings.Cut(rest, ".")
		var c *pmnsNode
		for c = np.first; c != nil; c = c.next {
			if c.name == comp {
				break
			}
		}
		if c == nil {
			return nil
		}
		if !more {
			return c
		}
		np = c
		rest = tail
	}
}

// lookup resolves a name given on the command line as pmdumplog does: a
// leaf gives its PMID, a non-leaf gives every leaf below it in traversal
// order. ok is false for an unknown name.
func (ns *nameSpace) lookup(name string) (pmids []stream.PMID, ok bool) {
	n := ns.locate(name)
	if n == nil {
		return nil, false
	}
	if n.first == nil {
		return []stream.PMID{n.pmid}, true
	}
	var walk func(n *pmnsNode)
	walk = func(n *pmnsNode) {
		for c := n.first; c != nil; c = c.next {
			if c.first == nil {
				pmids = append(pmids, c.pmid)
			} else {
				walk(c)
			}
		}
	}
	walk(n)
	return pmids, true
}
