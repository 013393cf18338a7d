package linearizability

import (
	"fmt"

	"github.com/anishathalye/porcupine"

	"lockcheck/model"
)

// Colours of the annotations (CSS).
const (
	colGrant   = "#c8e6c9" // lock granted
	colPause   = "#e0e0e0" // paused, or a slow job
	colCrash   = "#ef9a9a" // crashed
	colUnsafe  = "#ff8a80" // ✗ acted without the key
	colRelease = "#e3f2fd" // released
	colKey     = "#bbdefb" // the key held
	colExpired = "#ffe0b2" // the key expired under a client that still believes
	colTick    = "#f5f5f5"
)

// Annotation rows. Porcupine numbers the job rows 0, 1, … (client A, B, …,
// then the final read) and puts tagged rows below them, sorted by tag:
// one row per client for its lock events ("A", "B", …), then the key, then
// the ticks.
const (
	tagKey  = "key " + model.LockKey
	tagTick = "tick"
)

// runAnnotations tells the run's story beside the operations: per client,
// lock grants, pauses, slow jobs, crashes, ✗ and releases; the key's
// holders with how each holding ended; and the ticks. Times are step
// numbers, like the operations'.
func runAnnotations(r *model.Run) []porcupine.Annotation {
	d := &r.Design
	end := int64(len(r.Steps))
	var out []porcupine.Annotation
	point := func(client int, seq int64, desc, details, color string) {
		out = append(out, porcupine.Annotation{Tag: clientName(client), Start: seq, End: seq,
			Description: desc, Details: details, BackgroundColor: color})
	}
	// the key: who holds it, from which step to which
	holder, since, sinceTick, sinceTok := -1, int64(0), 0, 0
	closeKey := func(seq int64, how, color string) {
		if holder < 0 {
			return
		}
		out = append(out, porcupine.Annotation{Tag: tagKey, Start: since, End: seq,
			Description:     clientName(holder) + tokenNote(sinceTok),
			Details:         fmt.Sprintf("%s holds %s from t=%d; %s", model.LockValue(holder), model.LockKey, sinceTick, how),
			BackgroundColor: color})
		holder = -1
	}
	// ticks
	tickStart, tick := int64(0), int(r.Init.Now)
	for k := range r.Steps {
		st := &r.Steps[k]
		seq := int64(st.Seq)
		ev := &st.Event
		a := st.Action
		after := st.After.KeyOwner(0)
		if a.Kind == model.ActTick {
			out = append(out, porcupine.Annotation{Tag: tagTick, Start: tickStart, End: seq,
				Description: fmt.Sprintf("t=%d", tick), BackgroundColor: colTick})
			tickStart, tick = seq, int(ev.Now)
			if holder >= 0 && after != holder {
				how := fmt.Sprintf("expires at t=%d", ev.Now)
				color := colKey
				if ev.Flags&model.EvExpiredHeld != 0 {
					how += " while " + clientName(holder) + " still believes it holds the lock"
					color = colExpired
				}
				closeKey(seq, how, color)
			}
			continue
		}
		c := int(a.Client)
		who := clientName(c)
		switch a.Kind {
		case model.ActAcquire:
			if ev.Result == model.ResOK {
				point(c, seq, "granted"+tokenNote(int(ev.Token)), model.Describe(d, st), colGrant)
			}
		case model.ActIncr:
			point(c, seq, fmt.Sprintf("token %d", ev.Token), model.Describe(d, st), colGrant)
		case model.ActPause:
			until, how := end, "the trace ends while it is paused"
			for m := k + 1; m < len(r.Steps); m++ {
				o := &r.Steps[m]
				if o.Action.Kind == model.ActTick && o.Event.ResumedMask&(1<<c) != 0 {
					until, how = int64(o.Seq), fmt.Sprintf("resumes at t=%d", o.Event.Now)
					break
				}
				if o.Action.Kind == model.ActCrash && int(o.Action.Client) == c {
					until, how = int64(o.Seq), "crashes while paused"
					break
				}
			}
			out = append(out, porcupine.Annotation{Tag: who, Start: seq, End: until,
				Description:     fmt.Sprintf("paused %d ticks", a.Arg),
				Details:         fmt.Sprintf("%s pauses at t=%d (GC, VM migration); %s", who, ev.Now, how),
				BackgroundColor: colPause})
		case model.ActSlow:
			point(c, seq, "slow job", model.Describe(d, st), colPause)
		case model.ActCrash:
			point(c, seq, "crashed", model.Describe(d, st), colCrash)
		case model.ActRead, model.ActWrite, model.ActApply:
			if ev.Flags&model.EvUnsafe != 0 {
				point(c, seq, "✗ "+a.Kind.String()+" without the key", model.Describe(d, st), colUnsafe)
			}
		case model.ActRelease, model.ActDel:
			desc, color := "released", colRelease
			if ev.Flags&model.EvRemovedOther != 0 {
				desc, color = "✗ deleted "+clientName(int(ev.Other)-1)+"'s lock", colUnsafe
				if d.Lock == model.LockRedlock { // the key on one node, maybe not the lock (the details say)
					desc = "✗ deleted " + clientName(int(ev.Other)-1) + "'s key"
				}
			} else if a.Kind == model.ActRelease && d.Release == model.ReleaseGetDel {
				desc = "GET"
			} else if ev.Result != model.ResOK {
				desc = "release: nothing deleted"
			}
			point(c, seq, desc, model.Describe(d, st), color)
		}
		if after != holder {
			switch {
			case after < 0 && c == holder:
				closeKey(seq, fmt.Sprintf("released at t=%d", ev.Now), colKey)
			case after < 0:
				closeKey(seq, fmt.Sprintf("deleted by %s's %s at t=%d", who, a.Kind, ev.Now), colUnsafe)
			default:
				closeKey(seq, fmt.Sprintf("overwritten by %s's %s at t=%d", who, a.Kind, ev.Now), colKey)
			}
			if after >= 0 {
				holder, since, sinceTick, sinceTok = after, seq, int(ev.Now), int(st.After.Clients[after].Token)
			}
		}
	}
	out = append(out, porcupine.Annotation{Tag: tagTick, Start: tickStart, End: end + 1,
		Description: fmt.Sprintf("t=%d", tick), BackgroundColor: colTick})
	closeKey(end+1, "still held when the trace ends", colKey)
	return out
}
