package properties

import (
	"fmt"
	"time"

	"pgregory.net/rapid"

	"lockcheck/model"
)

// hunt is one rapid property: draw a schedule of design d, step by step,
// and judge every state against what exhaustive search said about exp's
// design (usually d itself; a planted-bug test judges a bugged design
// against the clean one).
//
// After every action, every property is evaluated on the new state (Bad):
//   - a property exhaustive search says cannot show (an Always property
//     that holds, a Sometimes one never seen) fails the check: rapid and
//     exhaustive search disagree;
//   - the target property, if any, fails the check at the first step that
//     shows it, and the schedule stops there (so rapid's shrinker works on
//     a schedule that ends at the violation);
//   - any other property that search also breaks is expected, and the
//     schedule goes on.
//
// A schedule ends when nothing is enabled (every job ended, or time reached
// the horizon); a finished run's job history then goes to the
// linearizability cross-check.
type hunt struct {
	d      model.Design
	exp    *expectation
	target int // index into exp.verdicts; -1: no target
	// tried: masks of fault kinds (faultMask) whose violations of the
	// target no longer count: a violation that uses only the kinds of one
	// of them stops the schedule uncaught
	tried []uint64
	pick  *picker

	trace []model.Action // the schedule being drawn (reused)
	buf   []model.Action // enabled actions (reused)

	rec *recorder // the TB of the rapid.Check running the hunt, if any

	// what the runs showed
	runs      int
	finished  int
	witnessed []int // per property: runs that showed it
	seen      []bool
	caught    []model.Action
	firstHit  time.Time // when the target was first caught
	bad       []model.Action
	badProp   string
	badWhy    string
	lin       linStats
}

// newHunt returns a hunt of design d judged by exp, for target (an index
// into exp.verdicts, or -1).
func newHunt(d model.Design, exp *expectation, target int, strat strategy) *hunt {
	h := &hunt{d: d, exp: exp, target: target, witnessed: make([]int, len(exp.verdicts)), seen: make([]bool, len(exp.verdicts))}
	h.pick = newPicker(strat, &h.d)
	return h
}

// prop is the rapid property.
func (h *hunt) prop(t *rapid.T) {
	d := &h.d
	h.runs++
	s := model.Init(d)
	h.trace = h.trace[:0]
	clear(h.seen)
	h.pick.start(t)
	h.judge(t, &s, nil)
	for {
		h.buf = model.Actions(d, &s, h.buf)
		if len(h.buf) == 0 {
			break
		}
		a := h.pick.pick(t, &s, h.buf)
		next, ev := model.Step(d, s, a)
		h.trace = append(h.trace, a)
		h.pick.observe(a)
		s = next
		if h.judge(t, &s, &ev) {
			return
		}
	}
	for i, ok := range h.seen {
		if ok {
			h.witnessed[i]++
		}
	}
	if s.Finished(d) {
		h.finished++
		// the search's schedules, not the shrinker's variations of a
		// caught one (which would cost a porcupine check each)
		if h.caught == nil {
			h.crossCheck(t, &s)
		}
	}
}

// judge evaluates every property on s; it reports whether the schedule
// stops here.
func (h *hunt) judge(t *rapid.T, s *model.State, ev *model.Event) bool {
	for i := range h.exp.verdicts {
		v := &h.exp.verdicts[i]
		if !v.prop.Bad(&h.d, s, ev) {
			continue
		}
		h.seen[i] = true
		switch {
		case !v.shows:
			h.disagree(t, v.prop.Name, fmt.Sprintf("exhaustive search of %s says %s cannot show", h.exp.design.Name(), v.prop.Name))
		case i == h.target && covered(faultMask(h.trace), h.tried):
			return true
		case i == h.target:
			h.catch(t)
			return true
		}
	}
	return false
}

// disagree fails the check: rapid found what exhaustive search says cannot
// happen. (Its own line, so rapid's shrinker keeps a disagreement a
// disagreement.)
func (h *hunt) disagree(t *rapid.T, prop, why string) {
	h.bad = append(h.bad[:0], h.trace...)
	h.badProp, h.badWhy = prop, why
	t.Fatalf("DISAGREEMENT: %s shows at step %d; %s", prop, len(h.trace), why)
}

// catch fails the check: the target property shows.
func (h *hunt) catch(t *rapid.T) {
	if h.firstHit.IsZero() {
		h.firstHit = time.Now()
	}
	h.caught = append(h.caught[:0], h.trace...)
	t.Fatalf("caught %s at step %d", h.exp.verdicts[h.target].prop.Name, len(h.trace))
}

// faultMask has bit k set when trace takes a fault of kind k.
func faultMask(trace []model.Action) uint64 {
	var m uint64
	for _, a := range trace {
		if a.Kind.IsFault() {
			m |= 1 << (a.Kind & 63)
		}
	}
	return m
}

// covered reports whether every kind of fault in mask is in one of tried.
func covered(mask uint64, tried []uint64) bool {
	for _, t := range tried {
		if mask&^t == 0 {
			return true
		}
	}
	return false
}
