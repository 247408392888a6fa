package query

import (
	"sort"
	"strings"
)

// updNode is one level of an update's path tree: either a leaf holding an
// op, or an interior node whose children are kept in mongod's application
// order (field names lexicographic, array indexes numeric).
type updNode struct {
	op      *updateOp
	names   []string
	kids    []*updNode
	index   map[string]int
	creates bool // the subtree holds an op that creates fields
}

// conflict reports two update paths that overlap at path at.
type conflict struct{ at string }

func (c conflict) Error() string { return "conflict at " + c.at }

func newUpdNode() *updNode { return &updNode{index: map[string]int{}} }

// maxPathNodes bounds the depth of an update's path tree. No stored
// document is more than 200 levels deep (the wire limit), so the parts of
// a path past its 200th cannot name an existing field: they stay together,
// dots and all, as the name of one leaf, and a path of 500,000 parts costs
// 201 nodes, not 500,000.
const maxPathNodes = 201

// insert places op at its path, failing when it overlaps another op.
func (n *updNode) insert(op *updateOp) error {
	comps := strings.SplitN(op.path, ".", maxPathNodes)
	cur := n
	for i, c := range comps {
		if cur.op != nil {
			return conflict{at: strings.Join(comps[:i], ".")}
		}
		if i == maxPathNodes-1 {
			if err := cur.tailConflict(comps, op.path); err != nil {
				return err
			}
		}
		cur = cur.child(c)
	}
	if cur.op != nil || len(cur.names) > 0 {
		return conflict{at: op.path}
	}
	cur.op = op
	if createsFields(op.kind) {
		cur = n
		for _, c := range comps {
			cur.creates = true
			cur = cur.kids[cur.index[c]]
		}
		cur.creates = true
	}
	return nil
}

// tailConflict reports the overlap of the last of comps, a leaf name that
// may hold dots, with a leaf already at n whose name is a dotted prefix of
// it or has it as one.
func (n *updNode) tailConflict(comps []string, path string) error {
	last := comps[len(comps)-1]
	for _, name := range n.names {
		switch {
		case isPathPrefix(name, last):
			return conflict{at: strings.Join(comps[:len(comps)-1], ".") + "." + name}
		case isPathPrefix(last, name):
			return conflict{at: path}
		}
	}
	return nil
}

// child returns the named child, adding it in sorted position if needed.
func (n *updNode) child(name string) *updNode {
	if i, ok := n.index[name]; ok {
		return n.kids[i]
	}
	pos := sort.Search(len(n.names), func(i int) bool { return !fieldLess(n.names[i], name) })
	c := newUpdNode()
	n.names = append(n.names[:pos], append([]string{name}, n.names[pos:]...)...)
	n.kids = append(n.kids[:pos], append([]*updNode{c}, n.kids[pos:]...)...)
	for i := pos; i < len(n.names); i++ {
		n.index[n.names[i]] = i
	}
	return c
}

// fieldLess orders field names as mongod applies updates: numerically when
// both are array indexes, bytewise otherwise.
func fieldLess(a, b string) bool {
	ia, aok := arrayIdx(a)
	ib, bok := arrayIdx(b)
	if aok && bok && ia != ib {
		return ia < ib
	}
	return a < b
}

// createsFields reports whether an op may create a missing field.
func createsFields(k opKind) bool {
	switch k {
	case updUnset, updPop, updPull, updPullAll:
		return false
	}
	return true
}
