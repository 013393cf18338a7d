package model

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// timeline.go draws the seed's timeline as text: one column per tick, the
// rows the seed has (tick, believes, key, unsafe), and the rows that say why:
// the key on each node of a multi-node service, the validity each holder
// has left by its own clock, its watchdog (keep-alive, heartbeats), and the
// storage (counter, accepted writes, highest token seen, version).

// tlRow is one row of the text timeline.
type tlRow struct {
	label string
	cells []string
}

// RenderTimeline draws the timeline: the seed's rows, then (when the run
// has its states) one row per lock node of Redlock and of a primary with
// its replica, the validity left of each client that checks or counts it,
// the watchdog when it acts or is frozen, and the storage at the end of each
// tick; the ✗ row last. A legend under it says what the extra rows mean.
func RenderTimeline(r *Run) string {
	d := &r.Design
	var tick, believes, key, unsafe tlRow
	tick.label, believes.label, key.label, unsafe.label = "tick", "believes", "key", "unsafe"
	for _, tr := range r.Timeline {
		tick.cells = append(tick.cells, fmt.Sprint(tr.Tick))
		believes.cells = append(believes.cells, letters(d, tr.Believes, "·"))
		var h strings.Builder
		for _, o := range tr.Holders {
			if o < 0 {
				if len(tr.Holders) == 1 {
					h.WriteString("·")
				}
				continue
			}
			h.WriteString(ClientName(o))
		}
		if h.Len() == 0 {
			h.WriteString("·")
		}
		key.cells = append(key.cells, h.String())
		u := ""
		if tr.Unsafe != 0 {
			u = "✗" + letters(d, tr.Unsafe, "")
		}
		unsafe.cells = append(unsafe.cells, u)
	}
	rows := []tlRow{tick, believes, key}
	var legend []string
	if cols := tickStates(r); cols != nil {
		more, words := whyRows(d, cols)
		rows = append(rows, more...)
		legend = words
	}
	rows = append(rows, unsafe)
	return drawRows(rows) + wrapLegend(legend)
}

// drawRows aligns the rows: labels padded to the longest, every column as
// wide as its widest cell.
func drawRows(rows []tlRow) string {
	lw := 9
	for _, row := range rows {
		lw = max(lw, utf8.RuneCountInString(row.label)+1)
	}
	var b strings.Builder
	for _, row := range rows {
		b.WriteString(row.label)
		b.WriteString(strings.Repeat(" ", lw-utf8.RuneCountInString(row.label)))
		for col, cell := range row.cells {
			w := 0
			for _, rr := range rows {
				if col < len(rr.cells) {
					w = max(w, utf8.RuneCountInString(rr.cells[col]))
				}
			}
			b.WriteString(" ")
			b.WriteString(cell)
			b.WriteString(strings.Repeat(" ", w-utf8.RuneCountInString(cell)))
		}
		b.WriteString("\n")
	}
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// wrapLegend writes the legend's entries as lines of at most about 100
// characters.
func wrapLegend(entries []string) string {
	if len(entries) == 0 {
		return ""
	}
	var b strings.Builder
	line := ""
	for _, e := range entries {
		if line != "" && utf8.RuneCountInString(line)+2+utf8.RuneCountInString(e) > 100 {
			b.WriteString(line + "\n")
			line = ""
		}
		if line != "" {
			line += "; "
		}
		line += e
	}
	b.WriteString(line + "\n")
	return b.String()
}

// tickCol is what the run went through during one column of the timeline:
// every state it was in at that tick, in order (the first is the state the
// tick began with), and the steps taken at that tick.
type tickCol struct {
	states []*State
	steps  []*StepRecord
}

// tickStates groups the run's states by tick, one group per timeline
// column; nil when the run does not carry its states (a run rebuilt from
// its timeline alone) or they do not match its timeline.
func tickStates(r *Run) []tickCol {
	if r.Init.Now == 0 || len(r.Timeline) == 0 {
		return nil
	}
	cols := make([]tickCol, 0, len(r.Timeline))
	add := func(s *State, st *StepRecord) {
		if n := len(cols); n == 0 || int(cols[n-1].states[0].Now) != int(s.Now) {
			cols = append(cols, tickCol{})
		}
		c := &cols[len(cols)-1]
		c.states = append(c.states, s)
		if st != nil {
			c.steps = append(c.steps, st)
		}
	}
	add(&r.Init, nil)
	for k := range r.Steps {
		st := &r.Steps[k]
		add(&st.After, st)
	}
	if len(cols) != len(r.Timeline) {
		return nil
	}
	for k := range cols {
		if int(cols[k].states[0].Now) != r.Timeline[k].Tick {
			return nil
		}
	}
	return cols
}

// whyRows are the rows drawn from the run's states, with their legend.
func whyRows(d *Design, cols []tickCol) ([]tlRow, []string) {
	var rows []tlRow
	var legend []string
	last := func(c *tickCol) *State { return c.states[len(c.states)-1] }

	// one lane per lock node: who holds the key there, in order within a tick
	if n := NodeLanes(d); n > 0 {
		for k := 0; k < n; k++ {
			row := tlRow{label: laneName(d, k)}
			for c := range cols {
				var seq []string
				for _, s := range cols[c].states {
					cell := "·"
					switch nd := &s.Nodes[k]; {
					case nd.Back != 0:
						cell = "↓"
					case nd.Owner != 0:
						cell = ClientName(int(nd.Owner - 1))
					}
					if len(seq) == 0 || seq[len(seq)-1] != cell {
						seq = append(seq, cell)
					}
				}
				// nobody before a holder says nothing its letter does not;
				// nobody at the end of the tick says the key was lost
				kept := seq[:0]
				for j, x := range seq {
					if x != "·" || j == len(seq)-1 {
						kept = append(kept, x)
					}
				}
				seq = kept
				row.cells = append(row.cells, strings.Join(seq, ""))
			}
			rows = append(rows, row)
		}
		if d.Lock == LockRedlock {
			legend = append(legend, fmt.Sprintf("node k: who holds %s on Redlock node k, in order within a tick (· nobody, ↓ node down); the lock is held with %d of %d", LockKey, majority(d), d.Nodes))
		} else {
			legend = append(legend, fmt.Sprintf("%s: who holds %s on each node, in order within a tick (· nobody, ↓ node down)", laneNames(d), LockKey))
		}
	}

	// the validity each holder has left by its own clock
	if d.Lock == LockRedlock || d.Check == CheckValidity {
		for i := 0; i < d.Clients; i++ {
			row := tlRow{label: ClientName(i) + " validity"}
			any := false
			for c := range cols {
				cell := ""
				for _, s := range cols[c].states { // the last state of the tick in which it believed
					if cl := &s.Clients[i]; cl.Believes() {
						cell = fmt.Sprint(max(validityLeft(d, s, cl), 0))
						any = true
					}
				}
				row.cells = append(row.cells, cell)
			}
			if any {
				rows = append(rows, row)
			}
		}
		legend = append(legend, "X validity: the validity X has left by its own clock (TTL − time since it asked − drift) while it believes it holds the lock")
	}

	// the watchdog (keep-alive, session heartbeats): when it acts, and when
	// it is due but frozen with its paused client
	if wd := watchdogRow(d, cols); wd != nil {
		rows = append(rows, *wd)
		legend = append(legend, watchdogLegend(d))
	}

	// the storage at the end of each tick
	counter := tlRow{label: "counter"}
	writes := tlRow{label: "accepted"}
	maxTok := tlRow{label: "max token"}
	version := tlRow{label: "version"}
	for c := range cols {
		st := &last(&cols[c]).Store
		counter.cells = append(counter.cells, fmt.Sprint(st.Counter))
		writes.cells = append(writes.cells, fmt.Sprint(st.Accepted))
		maxTok.cells = append(maxTok.cells, fmt.Sprint(st.MaxTok))
		version.cells = append(version.cells, fmt.Sprint(st.Version))
	}
	rows = append(rows, counter, writes)
	legend = append(legend, "counter, accepted: the storage's counter and the writes it accepted, at the end of each tick")
	switch d.Storage {
	case StorageCAS:
		rows = append(rows, version)
		legend = append(legend, "version: its version column")
	case StorageMaxToken, StorageMaxWrite, StorageCondUpdate:
		rows = append(rows, maxTok)
		legend = append(legend, "max token: the highest fencing token it has seen ("+storageRule(d)+")")
	}
	return rows, legend
}

// storageRule says which tokens the storage records and refuses.
func storageRule(d *Design) string {
	switch d.Storage {
	case StorageMaxToken:
		return "reads and writes; a lower token is refused"
	case StorageMaxWrite:
		return "accepted writes only; a lower token is refused"
	}
	return "accepted writes; a write needs a greater token"
}

// NodeLanes is how many per-node rows a timeline draws: one per Redis
// node for Redlock and for a primary with its replica, none for one node.
func NodeLanes(d *Design) int { return Service(d.Lock).Lanes(d) }

// laneNames are the lanes' names, "primary, replica 1, replica 2".
func laneNames(d *Design) string {
	names := make([]string, NodeLanes(d))
	for k := range names {
		names[k] = laneName(d, k)
	}
	return strings.Join(names, ", ")
}

func laneName(d *Design, k int) string { return Service(d.Lock).NodeLabel(d, k) }

// watchdogRow marks, per tick, each renewal (A; A! when it failed) and
// each client whose renewal is due while it is paused, its watchdog frozen
// with it (a); for ZooKeeper, a paused client with a session sends no
// heartbeats (a). nil when nothing happened.
func watchdogRow(d *Design, cols []tickCol) *tlRow {
	zk := sessionQueue(d)
	if d.RenewTicks == 0 && !zk {
		return nil
	}
	row := tlRow{label: watchdogName(d)}
	any := false
	for c := range cols {
		cell := ""
		for i := 0; i < d.Clients; i++ {
			renewed, failed := false, false
			for _, st := range cols[c].steps {
				if st.Action.Kind == ActRenew && int(st.Action.Client) == i {
					if renewFailed(st) {
						failed = true
					} else {
						renewed = true
					}
				}
			}
			frozen := false
			for _, s := range cols[c].states {
				frozen = frozen || WatchdogFrozen(d, s, i)
			}
			switch {
			case failed:
				cell += ClientName(i) + "!"
			case renewed:
				cell += ClientName(i)
			case frozen:
				cell += strings.ToLower(ClientName(i))
			}
		}
		any = any || cell != ""
		row.cells = append(row.cells, cell)
	}
	if !any {
		return nil
	}
	return &row
}

// renewFailed reports whether a renewal step did not extend the lock.
func renewFailed(st *StepRecord) bool { return st.Event.Result != ResOK }

// WatchdogFrozen reports whether client i's watchdog (keep-alive) is due in
// s but frozen with its paused client, or (ZooKeeper) whether i, paused,
// sends no heartbeats while its session runs out.
func WatchdogFrozen(d *Design, s *State, i int) bool {
	c := &s.Clients[i]
	if !c.Live() || c.Flags&FlagPaused == 0 {
		return false
	}
	if sessionQueue(d) {
		return c.Flags&FlagZNode != 0 && c.Timer != 0
	}
	return d.RenewTicks > 0 && d.Watchdog != WatchdogSidecar && c.Flags&renewsFor(d) != 0 && c.Timer != 0 && c.Timer <= s.Now
}

func watchdogName(d *Design) string { return Service(d.Lock).Beat }

func watchdogLegend(d *Design) string { return Service(d.Lock).BeatLegend }

// ValidityLeft is the validity client i believes it has left in s, by its
// own clock (what check=validity and Redlock's vote compare with zero), and
// whether the design counts it at all (Redlock, check=validity).
func ValidityLeft(d *Design, s *State, i int) (int, bool) {
	if d.Lock != LockRedlock && d.Check != CheckValidity {
		return 0, false
	}
	return validityLeft(d, s, &s.Clients[i]), true
}
