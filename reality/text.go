package reality

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"lockcheck/model"
)

// Verdict is the comparison in one line.
func (c *Comparison) Verdict() string {
	switch {
	case c.Late:
		return fmt.Sprintf("void: step %d was answered %.1fms into its tick, past the %.1fms window, so an expiry may have raced a request; rerun with a longer -tick",
			c.LateSeq, c.LatestMS, c.WindowMS)
	case !c.Agree && c.Known != "":
		return fmt.Sprintf("reality differs from the model (%d %s), exactly by a documented difference of %s: %s", len(c.Differences), plural(len(c.Differences), "difference", "differences"), c.Client, c.Known)
	case !c.Agree:
		return fmt.Sprintf("reality differs from the model (%d %s)", len(c.Differences), plural(len(c.Differences), "difference", "differences"))
	}
	what := "no lost update, on the real servers too"
	switch {
	case c.Real.LostUpdate:
		what = fmt.Sprintf("lost update on the real servers too: counter %d after %d accepted writes", c.Real.Counter, c.Real.Accepted)
	case c.Real.Rejected+c.Real.ReadsRejected > 0 && model.SameDatabase(&c.d):
		what = "the late request failed on its killed session on the real server too: no lost update"
	case c.Real.Rejected+c.Real.ReadsRejected > 0:
		what = fmt.Sprintf("fencing rejected %d late %s on the real storage too: no lost update", c.Real.Rejected+c.Real.ReadsRejected, plural(c.Real.Rejected+c.Real.ReadsRejected, "request", "requests"))
	}
	return "reality agrees with the model: " + what
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Text is the report: the steps side by side, both timelines, the
// outcomes, and the verdict.
func (c *Comparison) Text() string {
	var b strings.Builder
	d := &c.d
	name := c.DesignName
	if name != c.Design {
		name += " = " + c.Design
	}
	fmt.Fprintf(&b, "reproduce %s (design %s)\n", c.Source, name)
	if d.Lock == model.LockDB {
		fmt.Fprintf(&b, "real: PostgreSQL (row locks(42), counter orders(42), tx=%s), one tick = %dms; TTL %d ticks → idle_in_transaction_session_timeout %dms (half a tick short)\n",
			d.Tx, c.TickMS, d.TTLTicks, c.PXMS)
	} else if d.Lock == model.LockAdvisory {
		fmt.Fprintf(&b, "real: PostgreSQL (advisory lock 42, level=%s, counter orders(42))%s, one tick = %dms; TTL %d ticks → %s %dms (half a tick short)\n",
			d.Level, advisoryPoolWords(d), c.TickMS, d.TTLTicks, advisoryTimeout(d), c.PXMS)
	} else if d.Lock == model.LockZooKeeper {
		nodes := zkDir + "/X-<seq>"
		if d.Protect == model.ProtectYes {
			nodes = zkDir + "/" + zkProtectedPrefix + "<GUID>-X-<seq> (protected mode)"
		}
		if c.Client == ClientUser || c.Client == ClientZkLock {
			nodes = zkDir + "/<the recipe's name>-<seq>, data X's lock value"
		}
		fmt.Fprintf(&b, "real: ZooKeeper (standalone, tickTime 10ms, lock nodes %s), storage on %s; one tick = %dms; session %d ticks → session timeout %dms (half a tick short)\n",
			nodes, c.Server, c.TickMS, d.SessionTicks, TTL(d.SessionTicks, time.Duration(c.TickMS)*time.Millisecond).Milliseconds())
	} else if d.Lock == model.LockEtcdMutex && d.Readers > 0 {
		fmt.Fprintf(&b, "real: etcd (embedded), etcd's recipe.RWMutex on %s/ (RLock for clients A … %s, Lock for the others; each key under its session's lease, by create revision), storage on %s; one tick = %dms; session %d ticks → lease TTL %ds, kept alive every 2.0s, just before each tick\n",
			EtcdLockKey, model.ClientName(d.Readers-1), c.Server, c.TickMS, d.SessionTicks, TTL(d.SessionTicks, time.Duration(c.TickMS)*time.Millisecond).Milliseconds()/1000)
	} else if d.Lock == model.LockEtcdMutex {
		fmt.Fprintf(&b, "real: etcd (embedded), etcd's blocking Mutex.Lock on %s/ (each client's key under its session's lease, queued by create revision), storage on %s; one tick = %dms; session %d ticks → lease TTL %ds, kept alive every 2.0s, just before each tick\n",
			EtcdLockKey, c.Server, c.TickMS, d.SessionTicks, TTL(d.SessionTicks, time.Duration(c.TickMS)*time.Millisecond).Milliseconds()/1000)
	} else if d.Lock == model.LockEtcd {
		fmt.Fprintf(&b, "real: etcd (embedded, lock key %s), storage on %s; one tick = %dms; TTL %d ticks → lease TTL %ds (half a tick short: expiry, up to 0.5s late in etcd, falls between two ticks' requests)\n",
			EtcdLockKey, c.Server, c.TickMS, d.TTLTicks, c.PXMS/1000)
		if c.TokenOffset != 0 && d.Fence != model.FenceNone {
			fmt.Fprintf(&b, "tokens are the put's revision − %d (etcd counts revisions from 1 and on across runs; the model counts tokens from token−1)\n", c.TokenOffset)
		}
	} else {
		fmt.Fprintf(&b, "real: %s; one tick = %dms; TTL %d ticks → PX %dms (half a tick short, so that expiry falls between two ticks' requests)\n",
			c.Server, c.TickMS, d.TTLTicks, c.PXMS)
	}
	if c.Client != "" && c.Client != ClientReference {
		fmt.Fprintf(&b, "client: %s\n", ClientDoc(c.Client))
	}
	fmt.Fprintf(&b, "timing: every request answered within %.1fms of its tick's start (window %.1fms)\n\n", c.LatestMS, c.WindowMS)

	// steps: client steps all; ticks only when the key changed or they differ
	lib := c.Client != "" && c.Client != ClientReference
	rows := [][]string{{"step", "t", "action", "model", "real", ""}}
	if lib {
		rows[0] = []string{"step", "t", "action", "model", "real", c.Client + " told the caller", ""}
	}
	row := func(sp StepPair, action, mark string) []string {
		if lib {
			return []string{fmt.Sprint(sp.Seq), fmt.Sprint(sp.Tick), action, sp.Model, sp.Real, sp.Told, mark}
		}
		return []string{fmt.Sprint(sp.Seq), fmt.Sprint(sp.Tick), action, sp.Model, sp.Real, mark}
	}
	prevKey := HolderNone
	for _, sp := range c.Steps {
		mark := ""
		if !sp.Agree {
			mark = "≠ " + sp.Diff
		}
		if sp.view.Took == model.ActTick {
			changed := sp.view.After != prevKey
			prevKey = sp.view.After
			if !changed && sp.Agree {
				continue
			}
			rows = append(rows, row(sp, "tick", mark))
			continue
		}
		prevKey = sp.view.After
		rows = append(rows, row(sp, sp.Action, mark))
	}
	right := []bool{true, true, false, false, false, false}
	if lib {
		right = append(right, false)
	}
	b.WriteString(table(rows, right))

	b.WriteString("\nmodel timeline\n")
	b.WriteString(model.RenderTimeline(&model.Run{Design: *d, Timeline: c.Model.Timeline}))
	key := "GET " + LockKey
	if d.Lock == model.LockEtcd {
		key = "a get of " + EtcdLockKey
	}
	if d.Lock == model.LockEtcdMutex {
		key = "the first key by create revision under " + EtcdLockKey + "/"
	}
	if d.Lock == model.LockZooKeeper {
		key = "the lowest node under " + zkDir
	}
	if d.Lock == model.LockDB {
		key = "pgrowlocks on locks(42)"
	}
	if d.Lock == model.LockAdvisory {
		key = "pg_locks on advisory lock 42"
	}
	b.WriteString("\nreal timeline (the key as " + key + " saw it after every step)\n")
	b.WriteString(model.RenderTimeline(&model.Run{Design: *d, Timeline: c.Real.Timeline}))

	b.WriteString("\n")
	m, r := &c.Model, &c.Real
	out := [][]string{{"", "model", "real"}}
	out = append(out,
		[]string{"counter", fmt.Sprint(m.Counter), fmt.Sprint(r.Counter)},
		[]string{"writes accepted", fmt.Sprint(m.Accepted), fmt.Sprint(r.Accepted)},
		[]string{"writes rejected", fmt.Sprint(m.Rejected), fmt.Sprint(r.Rejected)},
		[]string{"reads rejected", fmt.Sprint(m.ReadsRejected), fmt.Sprint(r.ReadsRejected)},
		[]string{"lost update", lost(m), lost(r)},
		[]string{"✗ acted without the key", moments(m.Unsafe), moments(r.Unsafe)},
		[]string{"removed another's key", moments(m.RemovedOther), moments(r.RemovedOther)},
		[]string{"key expired", expiries(m.Expired), expiries(r.Expired)},
		[]string{"linearizable", linText(m), linText(r)},
	)
	for k := range m.Properties {
		out = append(out, []string{m.Properties[k].Property, shownText(m.Properties[k]), shownText(r.Properties[k])})
	}
	b.WriteString(table(out, []bool{false, false, false}))
	if len(c.Differences) > 0 {
		b.WriteString("\ndifferences:\n")
		for k, s := range c.Differences {
			if k == 20 {
				fmt.Fprintf(&b, "  … and %d more\n", len(c.Differences)-k)
				break
			}
			b.WriteString("  " + s + "\n")
		}
	}
	b.WriteString("\nverdict: " + c.Verdict() + "\n")
	return b.String()
}

func lost(s *Side) string {
	switch {
	case !s.AllEnded:
		return "jobs unfinished"
	case s.LostUpdate:
		return fmt.Sprintf("yes (%d ≠ %d)", s.Counter, s.Accepted)
	}
	return "no"
}

func linText(s *Side) string {
	switch s.Linearizable {
	case "":
		if s.LinSummary != "" {
			return s.LinSummary
		}
		return "not checked"
	case "ok":
		return "yes"
	case "illegal":
		return "no"
	}
	return s.Linearizable
}

func moments(ms []Moment) string {
	if len(ms) == 0 {
		return "—"
	}
	var parts []string
	for _, m := range ms {
		parts = append(parts, fmt.Sprintf("%s step %d (t=%d)", m.Client, m.Seq, m.Tick))
	}
	return strings.Join(parts, ", ")
}

func expiries(ms []Moment) string {
	if len(ms) == 0 {
		return "—"
	}
	var parts []string
	for _, m := range ms {
		parts = append(parts, fmt.Sprintf("%s's at t=%d", m.Client, m.Tick))
	}
	return strings.Join(parts, ", ")
}

// table aligns columns (right-aligned where right[k]); trailing spaces go.
func table(rows [][]string, right []bool) string {
	width := make([]int, len(right))
	for _, r := range rows {
		for k, cell := range r {
			if n := utf8.RuneCountInString(cell); n > width[k] && k < len(r)-1 {
				width[k] = n
			}
		}
	}
	var b strings.Builder
	for _, r := range rows {
		var line strings.Builder
		for k, cell := range r {
			pad := strings.Repeat(" ", max(0, width[k]-utf8.RuneCountInString(cell)))
			if k > 0 {
				line.WriteString("  ")
			}
			if right[k] {
				line.WriteString(pad + cell)
			} else {
				line.WriteString(cell + pad)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	return b.String()
}
