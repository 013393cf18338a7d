// Package webview draws a replayed run (model.Run) as a self-contained web
// page: the seed's timeline, one column per tick, with one row per client
// showing what it believes and what it does, one row showing who really
// holds the key, and the red ✗ where a client acts on a lock it no longer
// has. Every step is in a title attribute (shown on hover), and each can be
// opened under the story on the whole state after it (inspector.go). The
// page needs no network and no script, and its bytes depend only on the run.
//
// Explorer (serve.go) is the interactive page of explore serve: the state
// of a schedule of one's own, its enabled actions to click, the timeline
// so far, each property's status and the shortest violation from here; a
// link names the design and the schedule (serve_path.go), and its script
// and style are embedded (assets/).
package webview

import (
	"fmt"
	"html"
	"strconv"
	"strings"

	"lockcheck/model"
)

// Info is what the page says around the timeline.
type Info struct {
	Title         string // the page title and heading
	Design        string // canonical design name
	Preset        string // "demo2 (Demo 2: …)", or ""
	Property      string // the broken property's name ("" if none)
	PropertyDoc   string
	ViolatedAt    int    // the step at which the property is violated (0: none)
	FoundBy       string // how it was found
	Linearizable  string // the linearizability verdict text ("" to leave out)
	TextFile      string // the counterexample's .txt file, linked ("" none)
	PorcupineFile string // porcupine's page, linked ("" none)
	Cause         string // one sentence: why it breaks ("" none)
	Prevented     string // what would have prevented it, as text ("" none)
	// StepHref starts each step's link in the timeline; the step's number
	// follows ("": "#state-", its entry in the page's inspector).
	StepHref string
	// Compact leaves each step's words out of its tick's heading and its
	// client's cell: its chip alone carries them. A long history's page
	// (the explorer's) is the third of the size for it.
	Compact bool
}

// palette are the clients' colours, A first.
var palette = [model.MaxClients]string{"#2563eb", "#d97706", "#059669", "#7c3aed", "#db2777", "#0d9488", "#ea580c", "#475569"}

// tickInfo is what happened during one column of the timeline.
type tickInfo struct {
	row    model.TickRow
	steps  []*model.StepRecord // every step at this tick (ticks included)
	paused uint8               // clients paused at some point of the tick
	frozen uint8               // clients whose watchdog (keep-alive, heartbeats) is due but frozen with them
	work   uint8               // clients working (between read and write)
	done   uint8               // clients finished by the end of the tick
	crash  uint8               // clients crashed by the end of the tick
	end    model.State         // the state at the end of the tick
	// valid[i] is 1 + the validity client i had left by its own clock when
	// it last believed it held the lock in the tick (0: it did not)
	valid [model.MaxClients]int
}

func columns(r *model.Run) []tickInfo {
	cols := make([]tickInfo, len(r.Timeline))
	index := map[int]int{}
	for k, tr := range r.Timeline {
		cols[k].row = tr
		index[tr.Tick] = k
	}
	n := r.Design.Clients
	observe := func(s *model.State) {
		k, ok := index[int(s.Now)]
		if !ok {
			return
		}
		c := &cols[k]
		c.end = *s
		for i := 0; i < n; i++ {
			if left, ok := model.ValidityLeft(&r.Design, s, i); ok && s.Clients[i].Believes() {
				c.valid[i] = max(left, 0) + 1
			}
		}
		for i := 0; i < n; i++ {
			cl := &s.Clients[i]
			bit := uint8(1) << i
			if cl.Flags&model.FlagPaused != 0 {
				c.paused |= bit
			}
			if model.WatchdogFrozen(&r.Design, s, i) {
				c.frozen |= bit
			}
			if cl.Phase == model.PhaseWrite && cl.Flags&model.FlagPaused == 0 {
				c.work |= bit
			}
			c.done &^= bit
			c.crash &^= bit
			switch cl.Phase {
			case model.PhaseDone:
				c.done |= bit
			case model.PhaseCrashed:
				c.crash |= bit
			}
		}
	}
	observe(&r.Init)
	for k := range r.Steps {
		st := &r.Steps[k]
		if j, ok := index[int(st.Event.Now)]; ok {
			cols[j].steps = append(cols[j].steps, st)
		}
		observe(&st.After)
	}
	return cols
}

// chip is the short label of a client's step in its row.
func chip(d *model.Design, st *model.StepRecord) (label, class string) {
	ev := &st.Event
	switch st.Action.Kind {
	case model.ActAcquire:
		svc := model.Service(d.Lock)
		verb, refused := svc.Acquire, svc.Refused
		if svc.Numbered {
			verb += fmt.Sprintf(" n%d", ev.Node+1)
		}
		if ev.Result == model.ResRefused {
			return refused, "refused"
		}
		if ev.Token != 0 {
			return fmt.Sprintf("%s #%d", verb, ev.Token), "grant"
		}
		return verb, "grant"
	case model.ActIncr:
		return fmt.Sprintf("#%d", ev.Token), "incr"
	case model.ActExpire:
		return "EXPIRE", "expire"
	case model.ActRead:
		if ev.Result == model.ResRejected {
			return "read ✗", "rejected"
		}
		return fmt.Sprintf("read %d", ev.Value), "read"
	case model.ActWrite:
		if ev.Result == model.ResRejected {
			return fmt.Sprintf("write %d refused", ev.Value), "rejected"
		}
		if d.FenceCheck == model.FenceCheckTwoStep {
			return fmt.Sprintf("check #%d", ev.Token), "check"
		}
		return fmt.Sprintf("write %d", ev.Value), "write"
	case model.ActApply:
		return fmt.Sprintf("write %d unchecked", ev.Value), "write"
	case model.ActRelease:
		if d.Release == model.ReleaseGetDel {
			return "GET", "release"
		}
		return "release", "release"
	case model.ActDel:
		return "DEL", "release"
	case model.ActCheck:
		return "check", "check"
	case model.ActArrive:
		return fmt.Sprintf("write %d lands", ev.Value), "write"
	case model.ActRenew:
		verb := model.Service(d.Lock).Renew
		if ev.Result != model.ResOK {
			return verb + " failed", "rejected"
		}
		return verb, "grant"
	case model.ActDelay:
		return fmt.Sprintf("delay %d", st.Action.Arg), "fault"
	case model.ActPause:
		return fmt.Sprintf("pause %d", st.Action.Arg), "fault"
	case model.ActSlow:
		return "slow", "fault"
	case model.ActCrash:
		return "crash", "fault"
	}
	return st.Action.Kind.String(), ""
}

// Page is the HTML page of run r.
func Page(r *model.Run, info Info) []byte {
	d := &r.Design
	cols := columns(r)
	var b strings.Builder
	esc := html.EscapeString
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }

	w("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	w("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	w("<title>lockcheck: %s</title>\n", esc(info.Title))
	w("<style>\n%s", css)
	for i := 0; i < d.Clients; i++ {
		w(".c%d{--c:%s}\n", i, palette[i])
	}
	w("</style>\n</head>\n<body>\n")
	w("<h1>%s</h1>\n", esc(info.Title))
	if info.Cause != "" {
		w("<p class=\"cause\" id=\"cause\">%s</p>\n", esc(info.Cause))
	}
	w("<dl class=\"meta\">\n")
	meta := func(k, v string) {
		if v != "" {
			w("<dt>%s</dt><dd>%s</dd>\n", esc(k), esc(v))
		}
	}
	meta("design", info.Design)
	meta("preset", info.Preset)
	if info.Property != "" {
		meta("property", info.Property+": "+info.PropertyDoc)
	}
	if info.ViolatedAt > 0 && info.ViolatedAt <= len(r.Steps) {
		meta("violated at", fmt.Sprintf("step %d of %d, t=%d", info.ViolatedAt, len(r.Steps), r.Steps[info.ViolatedAt-1].Event.Now))
	}
	meta("found by", info.FoundBy)
	w("</dl>\n")

	writeTimeline(&b, r, cols, info)
	writeRest(&b, r, info)
	return []byte(b.String())
}

// writeTimeline writes the timeline of run r (its columns cols) and its
// legend.
func writeTimeline(b *strings.Builder, r *model.Run, cols []tickInfo, info Info) {
	flagAt := flagStep(r, &info)
	d := &r.Design
	esc := html.EscapeString
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	href := info.StepHref
	if href == "" {
		href = "#state-"
	}
	// each step's words, told once: the tick's heading, the step's chip and
	// the ✗ all say them
	texts := make([]string, len(r.Steps))
	stepText := func(st *model.StepRecord) string {
		if texts[st.Seq-1] == "" {
			texts[st.Seq-1] = fmt.Sprintf("step %d: %s", st.Seq, model.Describe(d, st))
		}
		return texts[st.Seq-1]
	}
	w("<div class=\"scroll\">\n<table class=\"timeline\" id=\"timeline\">\n<thead>\n<tr class=\"row-tick\"><th class=\"label\">tick</th>")
	for _, c := range cols {
		title := fmt.Sprintf("t=%d", c.row.Tick)
		if !info.Compact {
			title = tickTitle(c, stepText)
		}
		w("<th class=\"tick\" data-tick=\"%d\" title=\"%s\">%d</th>", c.row.Tick, esc(title), c.row.Tick)
	}
	w("</tr>\n</thead>\n<tbody>\n")
	for i := 0; i < d.Clients; i++ {
		name := model.ClientName(i)
		bit := uint8(1) << i
		w("<tr class=\"row-client c%d\" data-client=\"%s\"><th class=\"label\"><span class=\"dot\"></span>%s believes</th>", i, name, name)
		for _, c := range cols {
			classes := []string{"cell"}
			var state []string
			if c.row.Believes&bit != 0 {
				classes = append(classes, "believes")
				state = append(state, name+" believes it holds the lock")
			}
			if c.paused&bit != 0 {
				classes = append(classes, "paused")
				state = append(state, name+" is paused")
			}
			if c.frozen&bit != 0 {
				classes = append(classes, "frozen")
				state = append(state, frozenWords(d, name))
			}
			if c.work&bit != 0 {
				classes = append(classes, "working")
				state = append(state, name+" works on what it read")
			}
			if c.done&bit != 0 && c.row.Believes&bit == 0 {
				classes = append(classes, "done")
				state = append(state, name+"'s job is done")
			}
			if c.crash&bit != 0 {
				classes = append(classes, "crashed")
				state = append(state, name+" has crashed")
			}
			var chips []string
			lines := []string{fmt.Sprintf("t=%d", c.row.Tick)}
			lines = append(lines, state...)
			for _, st := range c.steps {
				if !st.Action.Kind.ByClient() || int(st.Action.Client) != i {
					continue
				}
				label, cls := chip(d, st)
				if st.Event.Flags&(model.EvUnsafe|model.EvRemovedOther) != 0 {
					cls += " bad"
					label = "✗ " + label
				}
				if st.Seq == flagAt {
					cls += " violation"
					label = "⚑ " + label
				}
				text := stepText(st)
				if !info.Compact {
					lines = append(lines, text)
				}
				chips = append(chips, chipHTML(cls, st.Seq, text, href, label))
			}
			w("<td class=\"%s\" data-tick=\"%d\" title=\"%s\">%s</td>", strings.Join(classes, " "), c.row.Tick, esc(strings.Join(lines, "\n")), strings.Join(chips, ""))
		}
		w("</tr>\n")
	}
	if hasServiceSteps(r) {
		w("<tr class=\"row-service\"><th class=\"label\">lock service</th>")
		for _, c := range cols {
			var chips []string
			for _, st := range c.steps {
				if st.Action.Kind.ByClient() || st.Action.Kind == model.ActTick {
					continue
				}
				text := stepText(st)
				cls := "service"
				if st.Action.Kind.IsFault() {
					cls = "fault"
				}
				chips = append(chips, chipHTML(cls, st.Seq, text, href, st.Action.String()))
			}
			w("<td class=\"cell\" data-tick=\"%d\">%s</td>", c.row.Tick, strings.Join(chips, ""))
		}
		w("</tr>\n")
	}
	w("<tr class=\"row-key\"><th class=\"label\">key held by</th>")
	for _, c := range cols {
		var segs []string
		var who []string
		for _, o := range c.row.Holders {
			if o < 0 {
				segs = append(segs, "<span class=\"seg none\">·</span>")
				who = append(who, "nobody")
				continue
			}
			segs = append(segs, fmt.Sprintf("<span class=\"seg c%d\">%s</span>", o, model.ClientName(o)))
			who = append(who, model.ClientName(o))
		}
		title := fmt.Sprintf("t=%d: %s holds %s", c.row.Tick, strings.Join(who, ", then "), model.LockKey)
		w("<td class=\"cell key\" data-tick=\"%d\" title=\"%s\"><div class=\"bar\">%s</div></td>", c.row.Tick, esc(title), strings.Join(segs, ""))
	}
	w("</tr>\n")
	for k := 0; k < model.NodeLanes(d); k++ {
		w("<tr class=\"row-node\" data-node=\"%d\"><th class=\"label\">node %d key</th>", k+1, k+1)
		for _, c := range cols {
			n := &c.end.Nodes[k]
			title := fmt.Sprintf("t=%d: node %d: %s", c.row.Tick, k+1, nodeText(n))
			cell := "<span class=\"seg none\">·</span>"
			if n.Back != 0 {
				cell = "<span class=\"seg down\">down</span>"
			} else if n.Owner != 0 {
				cell = fmt.Sprintf("<span class=\"seg c%d\">%s</span>", n.Owner-1, model.ClientName(int(n.Owner-1)))
			}
			w("<td class=\"cell key\" data-tick=\"%d\" title=\"%s\"><div class=\"bar\">%s</div></td>", c.row.Tick, esc(title), cell)
		}
		w("</tr>\n")
	}
	writeValidity(w, r, cols)
	w("<tr class=\"row-storage\"><th class=\"label\">storage</th>")
	prev := r.Init.Store
	for _, c := range cols {
		st := c.end.Store
		cls := "cell storage"
		if st != prev {
			cls += " changed"
		}
		text := storageText(d, st)
		w("<td class=\"%s\" data-tick=\"%d\" title=\"t=%d: %s\">%s</td>", cls, c.row.Tick, c.row.Tick, esc(text), esc(storageChip(d, st)))
		prev = st
	}
	w("</tr>\n<tr class=\"row-unsafe\"><th class=\"label\">unsafe</th>")
	for _, c := range cols {
		var marks []string
		for i := 0; i < d.Clients; i++ {
			if c.row.Unsafe&(1<<i) == 0 {
				continue
			}
			var what []string
			for _, st := range c.steps {
				if st.Action.Kind.ByClient() && int(st.Action.Client) == i && st.Event.Flags&model.EvUnsafe != 0 {
					what = append(what, stepText(st))
				}
			}
			marks = append(marks, fmt.Sprintf("<span class=\"x c%d\" data-client=\"%s\" title=\"%s\">✗%s</span>", i, model.ClientName(i), esc(strings.Join(what, "\n")), model.ClientName(i)))
		}
		w("<td class=\"cell\" data-tick=\"%d\">%s</td>", c.row.Tick, strings.Join(marks, ""))
	}
	w("</tr>\n</tbody>\n</table>\n</div>\n")
	w("<p class=\"legend\">Hover a cell or a step for its story; click a step to open the state after it. Shaded: the client believes it holds the lock; "+
		"hatched: paused; underlined: working between its read and its write; red underline: its watchdog (keep-alive, heartbeats) is due but frozen with it; "+
		"<span class=\"x\">✗</span>: a client reads or writes while the key is not its own. "+
		"Key row: who really holds <code>%s</code>, in order within a tick.</p>\n", model.LockKey)
}

// writeRest writes what follows the timeline: the story, the inspector,
// the outcome, the verdicts and the links.
func writeRest(b *strings.Builder, r *model.Run, info Info) {
	esc := html.EscapeString
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	w("<h2>Story</h2>\n<pre class=\"story\">")
	for _, line := range strings.SplitAfter(model.RenderSteps(r), "\n") {
		if strings.Contains(line, "✗") {
			w("<span class=\"bad\">%s</span>", esc(line))
		} else {
			w("%s", esc(line))
		}
	}
	w("</pre>\n")
	writeInspector(b, r, info)
	w("<h2>Outcome</h2>\n<pre>%s</pre>\n", esc(model.RenderSummary(r)))
	if info.Linearizable != "" {
		w("<h2>Linearizability</h2>\n<pre>%s</pre>\n", esc(info.Linearizable))
	}
	if info.Prevented != "" {
		w("<h2>What would have prevented this</h2>\n<pre id=\"prevented\">%s</pre>\n", esc(info.Prevented))
	}
	var links []string
	if info.TextFile != "" {
		links = append(links, fmt.Sprintf("<a href=\"%s\">the counterexample as text</a>", esc(info.TextFile)))
	}
	if info.PorcupineFile != "" {
		links = append(links, fmt.Sprintf("<a href=\"%s\">porcupine's view of the history</a>", esc(info.PorcupineFile)))
	}
	if len(links) > 0 {
		w("<p class=\"links\">%s</p>\n", strings.Join(links, " · "))
	}
	w("</body>\n</html>\n")
}

// hasServiceSteps: does the run have steps of the lock service itself
// (failover, replication, node crash, clock jump)?
func hasServiceSteps(r *model.Run) bool {
	for k := range r.Steps {
		if a := r.Steps[k].Action; a.Kind != model.ActTick && !a.Kind.ByClient() {
			return true
		}
	}
	return false
}

// chipHTML is one step's chip in the timeline: its label, its words as
// the title, a link to the step (concatenated, not Sprintf'd: a long
// history has thousands).
func chipHTML(cls string, seq int, title, href, label string) string {
	n := strconv.Itoa(seq)
	return "<span class=\"chip " + cls + "\" data-step=\"" + n + "\" title=\"" + html.EscapeString(title) + "\"><a href=\"" + html.EscapeString(href) + n + "\">" + html.EscapeString(label) + "</a></span>"
}

func tickTitle(c tickInfo, stepText func(*model.StepRecord) string) string {
	lines := []string{fmt.Sprintf("t=%d", c.row.Tick)}
	for _, st := range c.steps {
		if st.Action.Kind == model.ActTick && st.Event.ExpiredMask == 0 && st.Event.ResumedMask == 0 {
			continue
		}
		lines = append(lines, stepText(st))
	}
	return strings.Join(lines, "\n")
}

const css = `ol.inspector{font:13px/1.35 ui-monospace,"DejaVu Sans Mono",monospace;list-style:none;padding-left:.5em;max-width:90em}
ol.inspector summary{cursor:pointer;padding:.1em .3em;border-radius:3px}
ol.inspector summary:hover{background:#f3f4f6}
details.st[open]>summary{background:#eef2ff;font-weight:600}
details.st.flagged>summary{color:#b91c1c;font-weight:700;outline:2px solid #dc2626;outline-offset:1px}
table.state{border-collapse:collapse;margin:.3em 1em .3em 0;display:inline-table;vertical-align:top;font-size:12px}
table.state caption{text-align:left;color:#6b7280;font-weight:600;white-space:nowrap}
table.state th,table.state td{border:1px solid #e5e7eb;padding:.1em .45em;text-align:center;white-space:nowrap}
table.state th{background:#f9fafb;font-weight:600;color:#374151}
table.state td.ch,.legend .ch{background:#fde68a;color:#7c2d12;font-weight:700}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5em;color:#1f2937;background:#fff}
.storage{font:12px ui-monospace,monospace;text-align:center;color:#374151}
.validity{font:12px ui-monospace,monospace;text-align:center;color:#374151}
.validity.out{background:#fee2e2;color:#b91c1c;font-weight:700}
.storage.changed{background:#fef3c7;font-weight:700}
.seg.down{background:#9ca3af;color:#fff}
.chip.violation{outline:2px solid #dc2626;outline-offset:1px}
.cause{font-weight:600;max-width:60em;border-left:4px solid #dc2626;padding-left:.6em}
h1{font-size:1.3em;margin:0 0 .5em}
h2{font-size:1.05em;margin:1.4em 0 .4em}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:.15em 1em;margin:0 0 1em;font-size:.92em}
dl.meta dt{color:#6b7280}
dl.meta dd{margin:0}
.scroll{overflow-x:auto}
table.timeline{border-collapse:separate;border-spacing:2px;font:13px/1.2 ui-monospace,"DejaVu Sans Mono",monospace}
table.timeline th.label{text-align:right;padding:.2em .6em .2em 0;white-space:nowrap;font-weight:600;color:#374151}
table.timeline th.tick{min-width:3.6em;color:#6b7280;font-weight:normal;border-bottom:1px solid #d1d5db}
.dot{display:inline-block;width:.7em;height:.7em;border-radius:50%;background:var(--c);margin-right:.4em}
td.cell{height:2.1em;min-width:3.6em;vertical-align:middle;text-align:center;background:#f9fafb;border-radius:3px;padding:1px}
tr.row-client td.believes{background:color-mix(in srgb,var(--c) 30%,#fff);box-shadow:inset 0 -3px 0 var(--c)}
tr.row-client td.paused{background-image:repeating-linear-gradient(135deg,transparent 0 4px,rgba(0,0,0,.14) 4px 6px)}
tr.row-client td.working{border-bottom:2px dotted var(--c)}
tr.row-client td.frozen{box-shadow:inset 0 -3px 0 #dc2626}
tr.row-client td.done{background:#f3f4f6;color:#9ca3af}
tr.row-client td.crashed{background:#e5e7eb}
.chip{display:inline-block;margin:1px;padding:0 .3em;border-radius:3px;background:#fff;border:1px solid var(--c);font-size:11px;white-space:nowrap}
.chip a{color:inherit;text-decoration:none}
.chip.refused{border-style:dashed;color:#9ca3af}
.chip.grant{background:var(--c);color:#fff}
.chip.rejected{border-color:#6b7280;color:#6b7280;text-decoration:line-through}
.chip.fault{border-color:#111827;background:#111827;color:#fff}
.chip.service{border-color:#6b7280;color:#374151}
.chip.check{border-style:dotted}
.chip.bad{border:2px solid #dc2626;color:#dc2626;background:#fff}
td.key{padding:0}
.bar{display:flex;gap:1px;height:100%}
.seg{flex:1;min-width:1.4em;padding:.45em .2em;background:var(--c);color:#fff;font-weight:700;border-radius:2px}
.seg.none{background:transparent;color:#9ca3af;font-weight:normal}
.x{color:#dc2626;font-weight:700;font-size:15px;margin:0 1px}
p.legend{font-size:.85em;color:#4b5563;max-width:60em}
pre.story .bad{color:#b91c1c;font-weight:700}
pre{font:13px/1.4 ui-monospace,"DejaVu Sans Mono",monospace;background:#f9fafb;padding:.6em;border-radius:4px;overflow-x:auto}
`

func nodeText(n *model.Node) string {
	if n.Back != 0 {
		return fmt.Sprintf("down until t=%d", n.Back)
	}
	if n.Owner == 0 {
		return fmt.Sprintf("no key; fence counter %d", n.Fence)
	}
	exp := "no expiry"
	if n.Exp != 0 {
		exp = fmt.Sprintf("expires at t=%d", n.Exp)
	}
	return fmt.Sprintf("key %s, %s; fence counter %d", model.LockValue(int(n.Owner-1)), exp, n.Fence)
}

// storageText is the storage at the end of a tick in words: the counter,
// the writes it accepted, the highest token it has seen, the version.
func storageText(d *model.Design, st model.Storage) string {
	s := fmt.Sprintf("counter %d, %d writes accepted", st.Counter, st.Accepted)
	if d.Storage != model.StoragePlain && d.Storage != model.StorageCAS {
		s += fmt.Sprintf(", highest token seen %d", st.MaxTok)
	}
	if d.Storage == model.StorageCAS {
		s += fmt.Sprintf(", version %d", st.Version)
	}
	return s
}

// flagStep is the step ⚑ marks: the step at which the property is
// violated, except for a lost update, which is seen only once every job
// has ended (often at a harmless release): there ⚑ marks the accepted
// write that lost the update, the one that wrote a value no greater than
// the counter it overwrote.
func flagStep(r *model.Run, info *Info) int {
	if info.Property != "no-lost-update" {
		return info.ViolatedAt
	}
	at := info.ViolatedAt
	for k := range r.Steps {
		st := &r.Steps[k]
		if st.Seq > info.ViolatedAt {
			break
		}
		if st.After.Store.Accepted > st.Before.Store.Accepted && st.After.Store.Counter <= st.Before.Store.Counter {
			at = st.Seq
		}
	}
	return at
}

func storageChip(d *model.Design, st model.Storage) string {
	s := fmt.Sprintf("%d (%d acc.)", st.Counter, st.Accepted)
	if d.Storage != model.StoragePlain && d.Storage != model.StorageCAS {
		s += fmt.Sprintf(" ≥#%d", st.MaxTok)
	}
	if d.Storage == model.StorageCAS {
		s += fmt.Sprintf(" v%d", st.Version)
	}
	return s
}

// frozenWords is a frozen watchdog (keep-alive, heartbeats) on hover.
func frozenWords(d *model.Design, name string) string { return name + model.Service(d.Lock).Frozen }

// writeValidity writes a row per client of a design that counts validity
// (Redlock, check=validity): what it has left by its own clock in each tick
// it believes it holds the lock.
func writeValidity(w func(string, ...any), r *model.Run, cols []tickInfo) {
	d := &r.Design
	if _, ok := model.ValidityLeft(d, &r.Init, 0); !ok {
		return
	}
	for i := 0; i < d.Clients; i++ {
		any := false
		for _, c := range cols {
			any = any || c.valid[i] != 0
		}
		if !any {
			continue
		}
		name := model.ClientName(i)
		w("<tr class=\"row-validity c%d\" data-client=\"%s\"><th class=\"label\">%s validity</th>", i, name, name)
		for _, c := range cols {
			if c.valid[i] == 0 {
				w("<td class=\"cell validity\" data-tick=\"%d\"></td>", c.row.Tick)
				continue
			}
			left := c.valid[i] - 1
			cls := "cell validity"
			if left == 0 {
				cls += " out"
			}
			w("<td class=\"%s\" data-tick=\"%d\" title=\"t=%d: %s has %d ticks of validity left by its own clock\">%d</td>", cls, c.row.Tick, c.row.Tick, name, left, left)
		}
		w("</tr>\n")
	}
}
