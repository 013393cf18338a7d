package webview

import (
	"fmt"
	"html"
	"strconv"
	"strings"

	"lockcheck/model"
)

// inspector.go draws the state inspector under the timeline: the initial
// state and every step, each a <details> that opens on the whole state
// after the step, the fields the step changed highlighted (the TLA+
// Toolbox's trace explorer shows a trace so). It needs no script: the
// browser opens and closes <details> by itself.

// field is one field of the state as the inspector shows it.
type field struct {
	id    string // the field's path in model.State, e.g. "Clients.0.Phase", "Store.Counter"
	label string // its column heading
	value func(s *model.State) string
}

// group is a table of the inspector: one row per entity (client, node), or
// one row for the whole (storage, time and faults).
type group struct {
	title  string
	rows   []string // row headings ("" for a one-row table)
	fields [][]field
	zero   map[string]bool // ids of the fields that stay zero in the run (stateGroupsKeepZero keeps them)
}

var flagNames = []struct {
	bit  uint16
	name string
}{
	{model.FlagBelieves, "believes"}, {model.FlagStarted, "started"}, {model.FlagPaused, "paused"}, {model.FlagSlow, "slow"},
	{model.FlagSawMine, "saw-mine"}, {model.FlagWaiting, "waiting"}, {model.FlagZNode, "znode"}, {model.FlagBuffered, "buffered"},
	{model.FlagChecked, "checked"}, {model.FlagLost, "lost"}, {model.FlagInFlight, "in-flight"}, {model.FlagWrote, "wrote"},
	{model.FlagStrayDel, "stray-del"}, {model.FlagOldSide, "old-side"}, {model.FlagReply, "reply"}, {model.FlagHung, "hung"},
}

func flagsText(f uint16) string {
	var names []string
	for _, fl := range flagNames {
		if f&fl.bit != 0 {
			names = append(names, fl.name)
			f &^= fl.bit
		}
	}
	if f != 0 {
		names = append(names, fmt.Sprintf("0x%x", f))
	}
	if len(names) == 0 {
		return "·"
	}
	return strings.Join(names, " ")
}

func num[T ~uint8 | ~uint16 | ~int8](v T) string { return strconv.Itoa(int(v)) }

func tick[T ~uint8](v T) string {
	if v == 0 {
		return "·"
	}
	return "t=" + strconv.Itoa(int(v))
}

func ownerText(o uint8) string {
	if o == 0 {
		return "·"
	}
	return model.ClientName(int(o - 1))
}

// stateGroups lays out the state of a run of design d: a field appears when
// it is not zero in some state of the run (the rest are slots the design
// never uses), and the client's phase, flags and the node's owner always.
func stateGroups(r *model.Run) []group { return stateGroupsOf(r, false) }

// stateGroupsKeepZero is stateGroups with the fields that stay zero kept,
// marked zero (the explorer hides them until asked).
func stateGroupsKeepZero(r *model.Run) []group { return stateGroupsOf(r, true) }

func stateGroupsOf(r *model.Run, keepZero bool) []group {
	d := &r.Design
	states := make([]*model.State, 0, len(r.Steps)+1)
	states = append(states, &r.Init)
	for k := range r.Steps {
		states = append(states, &r.Steps[k].After)
	}
	// a client's or a node's field is read only from its own part of the
	// state, which most steps leave as it was: each field is looked at in
	// the distinct values of its part (in order, repeats dropped), not in
	// every state
	var zero model.State
	clientParts := make([][]*model.State, d.Clients)
	nodeParts := make([][]*model.State, model.MaxNodes)
	var storeParts []*model.State // the storage's fields, read from these three
	for _, s := range states {
		if n := len(storeParts); n == 0 || storeParts[n-1].Store != s.Store || storeParts[n-1].StoreCopy != s.StoreCopy || storeParts[n-1].CounterFence != s.CounterFence {
			storeParts = append(storeParts, s)
		}
		for i := range clientParts {
			if n := len(clientParts[i]); n == 0 || clientParts[i][n-1].Clients[i] != s.Clients[i] {
				clientParts[i] = append(clientParts[i], s)
			}
		}
		for k := range nodeParts {
			if n := len(nodeParts[k]); n == 0 || nodeParts[k][n-1].Nodes[k] != s.Nodes[k] {
				nodeParts[k] = append(nodeParts[k], s)
			}
		}
	}
	usedIn := func(f field, always bool, states []*model.State) bool {
		if always {
			return true
		}
		z := f.value(&zero)
		for _, s := range states {
			if f.value(s) != z {
				return true
			}
		}
		return false
	}
	var gs []group

	cl := group{title: "clients"}
	for i := 0; i < d.Clients; i++ {
		cl.rows = append(cl.rows, model.ClientName(i))
	}
	clientField := func(name, label string, always bool, v func(c *model.Client) string) {
		var row []field
		for i := 0; i < d.Clients; i++ {
			i := i
			row = append(row, field{id: fmt.Sprintf("Clients.%d.%s", i, name), label: label, value: func(s *model.State) string { return v(&s.Clients[i]) }})
		}
		for i, f := range row {
			if usedIn(f, always, clientParts[i]) {
				cl.fields = append(cl.fields, row)
				return
			}
		}
		if keepZero {
			cl.fields = append(cl.fields, zeroed(&cl, row))
		}
	}
	clientField("Phase", "next step", true, func(c *model.Client) string { return c.Phase.String() })
	clientField("Flags", "flags", true, func(c *model.Client) string { return flagsText(c.Flags) })
	clientField("Token", "token", false, func(c *model.Client) string { return num(c.Token) })
	clientField("Ready", "ready at", false, func(c *model.Client) string { return tick(c.Ready) })
	// what a client read stays shown when it is 0 in every state: a stale
	// read of 0 is what explains a lost update
	clientField("Read", "read", true, func(c *model.Client) string { return num(c.Read) })
	clientField("Version", "version read", false, func(c *model.Client) string { return num(c.Version) })
	clientField("Votes", "votes", false, func(c *model.Client) string { return nodeSet(c.Votes) })
	clientField("Asked", "asked", false, func(c *model.Client) string { return num(c.Asked) })
	clientField("Since", "asked at", false, func(c *model.Client) string { return tick(c.Since) })
	clientField("Timer", "timer", false, func(c *model.Client) string { return tick(c.Timer) })
	clientField("Cut", "cut until", false, func(c *model.Client) string { return tick(c.Cut) })
	clientField("Group", "cut from", false, func(c *model.Client) string { return num(c.Group) })
	clientField("Skew", "clock skew", false, func(c *model.Client) string { return num(c.Skew) })
	clientField("Stray", "stray copy at", false, func(c *model.Client) string { return tick(c.Stray) })
	gs = append(gs, transpose(cl))

	nodes := lockNodes(d)
	nd := group{title: "lock nodes"}
	for k := 0; k < nodes; k++ {
		nd.rows = append(nd.rows, nodeLabel(d, k))
	}
	nodeField := func(name, label string, always bool, v func(n *model.Node) string) {
		var row []field
		for k := 0; k < nodes; k++ {
			k := k
			row = append(row, field{id: fmt.Sprintf("Nodes.%d.%s", k, name), label: label, value: func(s *model.State) string { return v(&s.Nodes[k]) }})
		}
		for k, f := range row {
			if usedIn(f, always, nodeParts[k]) {
				nd.fields = append(nd.fields, row)
				return
			}
		}
		if keepZero {
			nd.fields = append(nd.fields, zeroed(&nd, row))
		}
	}
	nodeField("Owner", "key held by", true, func(n *model.Node) string { return ownerText(n.Owner) })
	nodeField("Exp", "key expires", false, func(n *model.Node) string { return tick(n.Exp) })
	nodeField("Back", "down until", false, func(n *model.Node) string { return tick(n.Back) })
	nodeField("Hold", "lock-delay until", false, func(n *model.Node) string { return tick(n.Hold) })
	nodeField("Fence", "fence counter", false, func(n *model.Node) string { return num(n.Fence) })
	gs = append(gs, transpose(nd))

	one := func(title string, fs []field, always map[string]bool, states []*model.State) {
		g := group{title: title, rows: []string{""}}
		for _, f := range fs {
			if usedIn(f, always[f.id], states) {
				g.fields = append(g.fields, []field{f})
			} else if keepZero {
				g.fields = append(g.fields, zeroed(&g, []field{f}))
			}
		}
		if len(g.fields) > 0 {
			gs = append(gs, transpose(g))
		}
	}
	one("storage", []field{
		{"Store.Counter", "counter", func(s *model.State) string { return num(s.Store.Counter) }},
		{"Store.Accepted", "writes accepted", func(s *model.State) string { return num(s.Store.Accepted) }},
		{"Store.MaxTok", "highest token seen", func(s *model.State) string { return num(s.Store.MaxTok) }},
		{"Store.Version", "version", func(s *model.State) string { return num(s.Store.Version) }},
		{"Store.Reserved", "reserved", func(s *model.State) string { return num(s.Store.Reserved) }},
		{"StoreCopy.Counter", "replica's counter", func(s *model.State) string { return num(s.StoreCopy.Counter) }},
		{"StoreCopy.MaxTok", "replica's highest token", func(s *model.State) string { return num(s.StoreCopy.MaxTok) }},
		{"StoreCopy.Version", "replica's version", func(s *model.State) string { return num(s.StoreCopy.Version) }},
		{"CounterFence", "external fence counter", func(s *model.State) string { return num(s.CounterFence) }},
	}, map[string]bool{"Store.Counter": true, "Store.Accepted": true}, storeParts)
	counts := []field{{"Now", "now", func(s *model.State) string { return tick(s.Now) }}}
	for f := model.Fault(0); f < model.NumFaults; f++ {
		if id, words := f.Counter(); id != "" {
			counts = append(counts, field{id, words, func(s *model.State) string { return strconv.Itoa(f.Used(&r.Design, s)) }})
		}
	}
	one("time and faults used", counts, map[string]bool{"Now": true}, states)
	return gs
}

// zeroed marks a row of g's fields as zero in the whole run.
func zeroed(g *group, row []field) []field {
	if g.zero == nil {
		g.zero = map[string]bool{}
	}
	for _, f := range row {
		g.zero[f.id] = true
	}
	return row
}

// transpose turns a group built field by field (fields[f][row]) into rows
// of fields (fields[row][f]).
func transpose(g group) group {
	out := group{title: g.title, rows: g.rows, fields: make([][]field, len(g.rows)), zero: g.zero}
	for _, col := range g.fields {
		for r := range g.rows {
			out.fields[r] = append(out.fields[r], col[r])
		}
	}
	return out
}

// lockNodes is how many lock-service nodes the design uses.
func lockNodes(d *model.Design) int {
	if n := model.NodeLanes(d); n > 0 {
		return n
	}
	return 1
}

func nodeLabel(d *model.Design, k int) string { return model.Service(d.Lock).NodeLabel(d, k) }

// writeInspector writes the inspector: the initial state, then one entry
// per step, the step at which the page's property breaks flagged.
func writeInspector(b *strings.Builder, r *model.Run, info Info) {
	d := &r.Design
	esc := html.EscapeString
	gs := stateGroups(r)
	fmt.Fprintf(b, "<h2>State after each step</h2>\n<p class=\"legend\">Open a step to see the whole state after it; "+
		"<span class=\"ch\">highlighted</span>: the fields the step changed. Fields that stay zero in the whole run are left out, but for what each client read.")
	flagAt := flagStep(r, &info)
	switch {
	case flagAt != info.ViolatedAt:
		fmt.Fprintf(b, " ⚑ marks step %d, the write that lost the update (%s is violated at step %d, once every job has ended).", flagAt, esc(info.Property), info.ViolatedAt)
	case info.ViolatedAt > 0 && info.ViolatedAt <= len(r.Steps):
		fmt.Fprintf(b, " ⚑ marks step %d, where %s is violated.", info.ViolatedAt, esc(info.Property))
	}
	b.WriteString("</p>\n<ol class=\"inspector\" id=\"inspector\" start=\"0\">\n")
	entry := func(seq int, summary string, before, after *model.State) {
		cls := "st"
		if seq > 0 && seq == flagAt {
			cls += " flagged"
			summary = "⚑ " + summary
		}
		fmt.Fprintf(b, "<li><details class=\"%s\" id=\"step-%d\" data-seq=\"%d\"><summary>%s</summary>\n<div class=\"state\" id=\"state-%d\">\n", cls, seq, seq, esc(summary), seq)
		writeStateTables(b, gs, before, after)
		b.WriteString("</div></details></li>\n")
	}
	entry(0, fmt.Sprintf("initial state, t=%d", r.Init.Now), nil, &r.Init)
	for k := range r.Steps {
		st := &r.Steps[k]
		entry(st.Seq, fmt.Sprintf("step %d: %s", st.Seq, stepWords(d, st)), &st.Before, &st.After)
	}
	b.WriteString("</ol>\n")
}

// writeStateTables writes the state after a step (before: the state before
// it, nil for the initial state), a table per group, the fields the step
// changed highlighted; a field marked zero gets class zero.
func writeStateTables(b *strings.Builder, gs []group, before, after *model.State) {
	esc := html.EscapeString
	for _, g := range gs {
		zero := func(f field) string {
			if g.zero[f.id] {
				return " class=\"zero\""
			}
			return ""
		}
		fmt.Fprintf(b, "<table class=\"state\"><caption>%s</caption>", esc(g.title))
		if len(g.fields) > 0 {
			b.WriteString("<tr><th></th>")
			for _, f := range g.fields[0] {
				fmt.Fprintf(b, "<th%s>%s</th>", zero(f), esc(f.label))
			}
			b.WriteString("</tr>")
		}
		for ri, row := range g.fields {
			fmt.Fprintf(b, "<tr><th>%s</th>", esc(g.rows[ri]))
			for _, f := range row {
				v := f.value(after)
				if before != nil && f.value(before) != v {
					fmt.Fprintf(b, "<td class=\"ch\" data-field=\"%s\" title=\"was %s\">%s</td>", f.id, esc(f.value(before)), esc(v))
				} else {
					fmt.Fprintf(b, "<td%s>%s</td>", zero(f), esc(v))
				}
			}
			b.WriteString("</tr>")
		}
		b.WriteString("</table>\n")
	}
}

// stepWords is a step in the story's words; a tick says what it did.
func stepWords(d *model.Design, st *model.StepRecord) string {
	s := model.Describe(d, st)
	if st.Action.Kind == model.ActTick {
		s = strings.Replace(s, fmt.Sprintf("t=%d", st.Event.Now), fmt.Sprintf("tick → t=%d", st.Event.Now), 1)
	}
	return s
}

// nodeSet lists the nodes of a bit set, 1-based ("·" for none).
func nodeSet(m uint8) string {
	var ns []string
	for k := 0; k < 8; k++ {
		if m&(1<<k) != 0 {
			ns = append(ns, fmt.Sprint(k+1))
		}
	}
	if len(ns) == 0 {
		return "·"
	}
	return strings.Join(ns, " ")
}
