package webview

import (
	"fmt"
	"html"
	"net/http"
	"strings"

	"lockcheck/model"
)

// servePage answers an explorer page; ?take=STEP takes an enabled action
// and redirects to the page after it.
func (e *Explorer) servePage(w http.ResponseWriter, r *http.Request, rest string) error {
	if take := r.URL.Query().Get("take"); take != "" {
		sc, at, err := locate(r, rest)
		if err != nil {
			return err
		}
		s, err := stateAt(sc, at)
		if err != nil {
			return refuse(http.StatusBadRequest, "%v", err)
		}
		a, err := model.ParseAction(strings.ReplaceAll(take, "_", " "))
		if err != nil {
			return refuse(http.StatusBadRequest, "take=%q: %v", clip(take), err)
		}
		if !model.Enabled(&sc.Design, &s, a) {
			return refuse(http.StatusBadRequest, "take=%q: %s is not enabled at step %d, t=%d (the page lists the enabled actions)", clip(take), a, at, s.Now)
		}
		trace := sc.Trace
		next := append(append([]model.Action(nil), trace[:at]...), a)
		if at < len(trace) && trace[at] == a {
			next = trace // the step forward: keep the rest
		}
		http.Redirect(w, r, PageURL(sc.DesignName, next, at+1), http.StatusSeeOther)
		return nil
	}
	whole := false
	switch v := r.URL.Query().Get("timeline"); v {
	case "":
	case "all":
		whole = true
	default:
		return refuse(http.StatusBadRequest, "timeline=%q: want timeline=all (every step drawn) or no timeline= (the last ticks)", clip(v))
	}
	st, err := load(r, rest)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, err = w.Write(explorerPage(st.sc, st.at, st.run, whole, e.cfg.Command, e.cfg.Reproduce))
	return err
}

// explorerPage is the page of schedule sc at step at (run: sc's first at
// steps replayed): the state, the enabled actions, each property's status,
// the timeline and the story so far. The timeline shows the last ticks of
// the path, about timelineSteps steps (all of it if wholeTimeline): a
// browser lays out a long path's every step in seconds.

func explorerPage(sc *Schedule, at int, run *model.Run, wholeTimeline bool, command string, reproduce func(name, text string) error) []byte {
	d := &run.Design
	var b strings.Builder
	// about 200 bytes a step (the timeline's chips and titles), grown once
	b.Grow(16<<10 + 200*len(run.Steps))
	esc := html.EscapeString
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	s := &run.Final
	props := model.PropertiesFor(d)
	info := Info{Title: "explorer: " + sc.DesignName, Design: d.Name(), StepHref: "?at=", Compact: true}
	for _, p := range props {
		if seq, ok := run.Violated(p.Name); ok && p.Expect == model.Always && (info.ViolatedAt == 0 || seq < info.ViolatedAt) {
			info.Property, info.PropertyDoc, info.ViolatedAt = p.Name, p.Doc, seq
		}
	}

	w("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	w("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	w("<title>lockcheck explorer: %s, step %d</title>\n", esc(sc.DesignName), at)
	w("<link rel=\"stylesheet\" href=\"/assets/explorer.css\">\n<style>\n%s", css)
	for i := 0; i < d.Clients; i++ {
		w(".c%d{--c:%s}\n", i, palette[i])
	}
	w("</style>\n<script src=\"/assets/explorer.js\" defer></script>\n</head>\n<body data-at=\"%d\" data-steps=\"%d\">\n", at, len(sc.Trace))
	w("<h1>lockcheck explorer: %s</h1>\n", esc(sc.DesignName))
	w("<dl class=\"meta\"><dt>design</dt><dd>%s</dd></dl>\n", esc(d.Name()))

	path := esc(SchedulePath(sc.DesignName, sc.Trace))
	// where we are: back, forward, the links
	w("<nav class=\"where\" id=\"where\">")
	if at > 0 {
		w("<a id=\"back\" href=\"?at=%d\" title=\"step %d\">← back</a>", at-1, at-1)
	} else {
		w("<span class=\"off\">← back</span>")
	}
	w(" <span id=\"position\">step %d of %d, t=%d</span> ", at, len(sc.Trace), s.Now)
	if at < len(sc.Trace) {
		w("<a id=\"forward\" href=\"?at=%d\" title=\"%s\">forward →</a>", at+1, esc(sc.Trace[at].String()))
	} else {
		w("<span class=\"off\">forward →</span>")
	}
	w(" · <a id=\"start\" href=\"?at=0\">the initial state</a>")
	w(" · <a id=\"download\" href=\"%s%s?at=%d\" download=\"%s\">download as scenario</a>", scenarioPrefix, path, at, esc(scenarioFileName(sc.DesignName)))
	w(" · <button type=\"button\" id=\"reproduce\">open in reproduce</button></nav>\n")
	text := scenarioText(sc, at)
	w("<pre id=\"reproduce-command\" hidden>%s</pre>\n", esc(reproduceCommand(sc, text, command, reproduce)))

	w("<div class=\"panes\">\n")
	// the timeline, the larger half of the work on a long schedule, is
	// drawn on another core meanwhile (run is only read)
	cols, from := columns(run), 0
	if !wholeTimeline {
		from = timelineWindow(cols, timelineSteps)
	}
	timeline := make(chan string, 1)
	go func() {
		var tb strings.Builder
		tb.Grow(8<<10 + 180*len(run.Steps))
		writeTimeline(&tb, run, cols[from:], info)
		timeline <- tb.String()
	}()
	writeActions(&b, d, s, at, props)
	w("<div class=\"side\">\n")
	writeProperties(&b, run, props, at)
	writeCurrentState(&b, run, at)
	w("</div>\n</div>\n")

	w("<h2>Timeline so far</h2>\n")
	if from > 0 {
		hidden := 0
		for _, c := range cols[:from] {
			hidden += len(c.steps)
		}
		w("<p class=\"legend\" id=\"timeline-window\">Ticks %d to %d, the last %d steps; the %d steps before t=%d are in <a id=\"whole-timeline\" href=\"?at=%d&amp;timeline=all\">the whole timeline</a> (a slow page: every step of the path drawn).</p>\n",
			cols[from].row.Tick, cols[len(cols)-1].row.Tick, at-hidden, hidden, cols[from].row.Tick, at)
	}
	b.WriteString(<-timeline)
	// the story is told when it is opened (/story/…): a long schedule's
	// page is the lighter for it
	w("<details id=\"story\" data-src=\"%s%s?at=%d\"><summary>Story so far (%d steps)</summary>\n<pre class=\"story\" id=\"story-text\">…</pre>\n</details>\n",
		storyPrefix, path, at, at)
	w("<h2>Outcome so far</h2>\n<pre id=\"outcome\">%s</pre>\n", esc(model.RenderSummary(run)))
	w("</body>\n</html>\n")
	return []byte(b.String())
}

// timelineSteps is about how many steps the explorer page's timeline
// draws: the ticks that hold the last of them. 600 steps lay out in a
// browser in about 0.2 s (TestExplorerLongScheduleInBrowser logs it);
// 4,872, the longest path the model allows, took 2-5 s.
const timelineSteps = 600

// timelineWindow is the first of cols that the page draws: the last
// columns holding at most max steps, at least the last column.
func timelineWindow(cols []tickInfo, max int) int {
	n := 0
	for k := len(cols) - 1; k >= 0; k-- {
		n += len(cols[k].steps)
		if n > max && k < len(cols)-1 {
			return k + 1
		}
	}
	return 0
}

// writeActions lists the actions enabled in s, in the story's words: each
// client's own steps, then each fault by kind and client, then the
// service's steps and time; each is a link that takes it.
func writeActions(b *strings.Builder, d *model.Design, s *model.State, at int, props []model.Property) {
	esc := html.EscapeString
	acts := model.Actions(d, s, nil)
	fmt.Fprintf(b, "<section class=\"actions\" id=\"actions\">\n<h2>Enabled actions at t=%d</h2>\n", s.Now)
	if len(acts) == 0 {
		b.WriteString("<p class=\"legend\" id=\"no-actions\">none: the run has ended (every client is done or crashed, or the horizon is reached)</p>\n</section>\n")
		return
	}
	b.WriteString("<p class=\"legend\">Click one to take it. ✗: the step breaks a property.</p>\n")
	link := func(a model.Action, label string, full bool) {
		next, ev := model.Step(d, *s, a)
		rec := model.StepRecord{Seq: at + 1, Action: a, Event: ev, Before: *s, After: next}
		words := stepWords(d, &rec)
		var broken []string
		for _, p := range props {
			if p.Expect == model.Always && p.Bad(d, &next, &ev) {
				broken = append(broken, p.Name)
			}
		}
		cls := "act"
		title := words
		if len(broken) > 0 {
			cls += " bad"
			title += " — ✗ " + strings.Join(broken, ", ")
			label = "✗ " + label
		}
		key := strings.ReplaceAll(a.String(), " ", "_")
		fmt.Fprintf(b, "<a class=\"%s\" data-action=\"%s\" href=\"?at=%d&amp;take=%s\" title=\"%s\">%s</a>", cls, esc(a.String()), at, esc(key), esc(title), esc(label))
		if full {
			fmt.Fprintf(b, " <span class=\"words\">%s</span>", esc(words))
			if len(broken) > 0 {
				fmt.Fprintf(b, " <span class=\"breaks\">✗ %s</span>", esc(strings.Join(broken, ", ")))
			}
		}
	}
	// the clients' own steps
	b.WriteString("<h3>clients</h3>\n<table class=\"acts\" id=\"client-actions\">\n")
	for i := 0; i < d.Clients; i++ {
		var own []model.Action
		for _, a := range acts {
			if a.Kind.ByClient() && !a.Kind.IsFault() && int(a.Client) == i {
				own = append(own, a)
			}
		}
		fmt.Fprintf(b, "<tr class=\"c%d\" data-client=\"%s\"><th><span class=\"dot\"></span>%s</th><td>", i, model.ClientName(i), model.ClientName(i))
		if len(own) == 0 {
			fmt.Fprintf(b, "<span class=\"none\">%s</span>", esc(clientIdle(d, s, i)))
		}
		for k, a := range own {
			if k > 0 {
				b.WriteString("<br>")
			}
			link(a, a.String(), true)
		}
		b.WriteString("</td></tr>\n")
	}
	b.WriteString("</table>\n")
	// faults, by kind, then client
	var kinds []model.ActionKind
	for _, a := range acts {
		if a.Kind.IsFault() && !containsKind(kinds, a.Kind) {
			kinds = append(kinds, a.Kind)
		}
	}
	if len(kinds) > 0 {
		b.WriteString("<h3>faults</h3>\n<table class=\"acts\" id=\"fault-actions\">\n")
		for _, k := range kinds {
			var rows []string
			byRow := map[string][]model.Action{}
			for _, a := range acts {
				if a.Kind != k {
					continue
				}
				row := k.String()
				if k.ByClient() {
					row = model.ClientName(int(a.Client)) + " " + k.String()
				}
				if _, ok := byRow[row]; !ok {
					rows = append(rows, row)
				}
				byRow[row] = append(byRow[row], a)
			}
			for _, row := range rows {
				fmt.Fprintf(b, "<tr data-fault=\"%s\"><th>%s</th><td>", esc(k.String()), esc(row))
				as := byRow[row]
				if len(as) == 1 {
					link(as[0], as[0].String(), true)
				} else {
					for _, a := range as {
						label := strings.TrimSpace(strings.TrimPrefix(a.String(), row))
						link(a, label, false)
						b.WriteString(" ")
					}
					// the words of the first and the last, the range between
					fmt.Fprintf(b, "<br><span class=\"words\">%s</span>", esc(rangeWords(d, s, at, as)))
				}
				b.WriteString("</td></tr>\n")
			}
		}
		b.WriteString("</table>\n")
	}
	// time and the service
	var other []model.Action
	for _, a := range acts {
		if !a.Kind.ByClient() && !a.Kind.IsFault() {
			other = append(other, a)
		}
	}
	if len(other) > 0 {
		b.WriteString("<h3>time and the lock service</h3>\n<table class=\"acts\" id=\"service-actions\">\n")
		for _, a := range other {
			fmt.Fprintf(b, "<tr><th>%s</th><td>", esc(a.Kind.String()))
			link(a, a.String(), true)
			b.WriteString("</td></tr>\n")
		}
		b.WriteString("</table>\n")
	}
	b.WriteString("</section>\n")
}

// rangeWords tells a fault family of several lengths (or nodes) by the
// words of its first and its last.
func rangeWords(d *model.Design, s *model.State, at int, as []model.Action) string {
	words := func(a model.Action) string {
		next, ev := model.Step(d, *s, a)
		rec := model.StepRecord{Seq: at + 1, Action: a, Event: ev, Before: *s, After: next}
		return model.Describe(d, &rec)
	}
	return words(as[0]) + " … " + words(as[len(as)-1])
}

func containsKind(ks []model.ActionKind, k model.ActionKind) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

// clientIdle says why client i has no step of its own now.
func clientIdle(d *model.Design, s *model.State, i int) string {
	c := &s.Clients[i]
	switch {
	case c.Phase == model.PhaseDone:
		return "done"
	case c.Phase == model.PhaseCrashed:
		return "crashed"
	case c.Flags&model.FlagPaused != 0:
		return "paused"
	case c.Ready != 0:
		return fmt.Sprintf("its next step at t=%d", c.Ready)
	}
	return "waits"
}

// writeProperties is each property's status at the current state, with
// the search from it.
func writeProperties(b *strings.Builder, run *model.Run, props []model.Property, at int) {
	esc := html.EscapeString
	b.WriteString("<section class=\"props\" id=\"properties\">\n<h2>Properties so far</h2>\n<table class=\"props\">\n")
	for _, p := range props {
		seq, found := run.Violated(p.Name)
		status, cls := "holds so far", "holds"
		switch {
		case found && p.Expect == model.Always:
			status, cls = fmt.Sprintf("✗ violated at step %d", seq), "violated"
		case found:
			status, cls = fmt.Sprintf("witness seen at step %d", seq), "seen"
		case p.Expect == model.Sometimes:
			status, cls = "not seen yet", "unseen"
		}
		what := "shortest violation from here"
		if p.Expect == model.Sometimes {
			what = "shortest witness from here"
		}
		fmt.Fprintf(b, "<tr class=\"prop %s\" data-property=\"%s\" data-status=\"%s\"><th title=\"%s\">%s</th><td class=\"status\">%s</td>", cls, esc(p.Name), cls, esc(p.Doc), esc(p.Name), esc(status))
		fmt.Fprintf(b, "<td><button type=\"button\" class=\"search\" data-property=\"%s\">%s</button> <button type=\"button\" class=\"stop\" hidden>stop</button> <span class=\"found\"></span></td></tr>\n", esc(p.Name), what)
	}
	b.WriteString("</table>\n</section>\n")
}

// writeCurrentState is the inspector's view of the state at step at, the
// fields its step changed marked; fields that stay zero so far are there,
// hidden until the toggle shows them.
func writeCurrentState(b *strings.Builder, run *model.Run, at int) {
	gs := stateGroupsKeepZero(run)
	b.WriteString("<section class=\"current\" id=\"state\">\n<h2>State</h2>\n<p class=\"legend\"><label><input type=\"checkbox\" id=\"show-zero\"> show fields that stay zero</label> · <span class=\"ch\">highlighted</span>: changed by the last step</p>\n<div class=\"state\" id=\"current-state\">\n")
	var before *model.State
	if at > 0 {
		before = &run.Steps[at-1].Before
	}
	writeStateTables(b, gs, before, &run.Final)
	b.WriteString("</div>\n</section>\n")
}

// scenarioText is the scenario file of sc's first at steps.
func scenarioText(sc *Schedule, at int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# A schedule explored by hand (explore serve), %d steps.\n\n", at)
	b.WriteString("design " + sc.DesignName + "\n")
	b.WriteString(model.FormatTrace(sc.Trace[:at]))
	return b.String()
}

func scenarioFileName(designName string) string {
	var b strings.Builder
	for _, r := range designName {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String() + "-explored.txt"
}

// reproduceCommand is the shell command that plays the scenario on real
// servers, or why it cannot.
func reproduceCommand(sc *Schedule, text, command string, reproduce func(name, text string) error) string {
	name := scenarioFileName(sc.DesignName)
	if reproduce != nil {
		if err := reproduce(name, text); err != nil {
			return "explore reproduce would refuse this schedule: " + oneLine(err.Error())
		}
	}
	return fmt.Sprintf("cat > %s <<'EOF'\n%sEOF\n%s %s\n", name, text, command, name)
}

// storyHTML is the story of run, the lines with a ✗ marked, for the
// page's story pane.
func storyHTML(run *model.Run) string {
	var b strings.Builder
	esc := html.EscapeString
	for _, line := range strings.SplitAfter(model.RenderSteps(run), "\n") {
		if strings.Contains(line, "✗") {
			b.WriteString("<span class=\"bad\">" + esc(line) + "</span>")
		} else {
			b.WriteString(esc(line))
		}
	}
	return b.String()
}

// serveStory answers the story of the schedule so far, as the page's
// story pane shows it (HTML, a line per step).
func (e *Explorer) serveStory(w http.ResponseWriter, r *http.Request, rest string) error {
	st, err := load(r, rest)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, err = w.Write([]byte(storyHTML(st.run)))
	return err
}
