package importer

import imprint "github.com/imprint-dev/imprint"

// ccIsRequest reports whether a user line is a user request: not meta and
// carrying text, not only tool results.
func ccIsRequest(r *ccRecord) bool {
	if r.role != imprint.RoleUser || r.meta {
		return false
	}
	if r.text != "" {
		return true
	}
	for _, b := range r.blocks {
		if b.Type == "text" || b.Type == "image" {
			return true
		}
	}
	return false
}

// ccAbandoned returns the uuids of lines on abandoned branches: below a line
// of the active chain (from the session's last main line back through
// parentUuid), a sibling branch that starts with another user request or
// another assistant message is abandoned. Siblings that are tool results or
// parts of a message on the chain are kept (parallel tool calls fork too).
// Lines whose parents are unknown, or files without parent links, keep
// everything.
func ccAbandoned(recs []*ccRecord, nodes []chainNode, session string) map[string]bool {
	var leaf *ccRecord
	for i := len(recs) - 1; i >= 0; i-- {
		if !recs[i].side && recs[i].uuid != "" {
			leaf = recs[i]
			break
		}
	}
	if leaf == nil {
		return nil
	}
	var main []chainNode
	for _, n := range nodes {
		if n.session == "" || n.session == session {
			main = append(main, n)
		}
	}
	path := chainPath(main, leaf.uuid)
	pathMsgs := map[string]bool{}
	for _, n := range main {
		if path[n.id] && n.rec != nil && n.rec.msgID != "" {
			pathMsgs[n.rec.msgID] = true
		}
	}
	return abandonedBranches(main, path, func(n chainNode) bool {
		if n.rec == nil {
			return false
		}
		if n.rec.role == imprint.RoleAssistant {
			return n.rec.msgID == "" || !pathMsgs[n.rec.msgID]
		}
		return ccIsRequest(n.rec)
	})
}

// chainNode is one entry of a parent-linked transcript.
type chainNode struct {
	id, parent string
	session    string
	rec        *ccRecord
}

// chainPath walks parent links back from leaf and returns the ids on the way.
func chainPath(nodes []chainNode, leaf string) map[string]bool {
	parent := make(map[string]string, len(nodes))
	known := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		if !known[n.id] {
			known[n.id] = true
			parent[n.id] = n.parent
		}
	}
	path := map[string]bool{}
	for cur := leaf; cur != "" && known[cur] && !path[cur]; cur = parent[cur] {
		path[cur] = true
	}
	return path
}

// abandonedBranches returns the ids of the subtrees hanging off the path
// whose first node isBranch says starts another branch.
func abandonedBranches(nodes []chainNode, path map[string]bool, isBranch func(chainNode) bool) map[string]bool {
	children := map[string][]chainNode{}
	seen := map[string]bool{}
	for _, n := range nodes {
		if n.parent != "" && !seen[n.id] {
			children[n.parent] = append(children[n.parent], n)
		}
		seen[n.id] = true
	}
	dropped := map[string]bool{}
	var drop func(n chainNode)
	drop = func(n chainNode) {
		stack := []chainNode{n}
		for len(stack) > 0 {
			c := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if dropped[c.id] || path[c.id] {
				continue
			}
			dropped[c.id] = true
			stack = append(stack, children[c.id]...)
		}
	}
	for _, n := range nodes {
		if !path[n.id] {
			continue
		}
		for _, c := range children[n.id] {
			if !path[c.id] && isBranch(c) {
				drop(c)
			}
		}
	}
	return dropped
}
