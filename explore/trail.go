package explore

import (
	"fmt"
	"sort"
	"sync"

	"lockcheck/model"
)

// trail keeps, for every visited state, what is needed to rebuild the
// shortest path to it, in 2 bytes: the index of the action that reached it
// among its parent's enabled actions, and how many states were first
// reached from it (its children). States are numbered in breadth-first
// order, and a level's new states in the order of their parents, so the
// children of state q are exactly the states 1+C(q) … C(q+1), where C(q)
// is the number of children of the states below q: the parent of x is the
// q with C(q) ≤ x-1 < C(q+1), found from a checkpoint of C every cpEvery
// states (4 bytes per 256 states) and a short scan. The initial state is
// id 0.
//
// The action index is the position in model.Actions of the parent state
// that was actually reached (not its canonical form), so a path of indices
// replays from model.Init as it is. Indices and child counts of 255 and
// above are rare (a state has that many actions only with long pauses and
// many clients) and go to side maps.
type trail struct {
	act    [][]uint8 // chunks of trailChunk
	kids   [][]uint8
	wideMu sync.Mutex
	wide   map[uint32]uint16 // action index of the states whose act byte is wideByte
	wideK  map[uint32]uint32 // children of the states whose kids byte is wideByte
	n      int               // ids in use
	cp     []uint32          // cp[b] = C(b·cpEvery), for the sealed states
	sealed int               // states whose children are all numbered
	total  uint32            // C(sealed)
}

const (
	trailChunkBits = 14
	trailChunk     = 1 << trailChunkBits
	wideByte       = 255
	cpEvery        = 256
)

func newTrail() *trail {
	t := &trail{wide: map[uint32]uint16{}, wideK: map[uint32]uint32{}}
	t.grow(1)
	t.set(0, 0)
	return t
}

// grow numbers n more states: ids t.n … t.n+n-1, to be filled by set.
func (t *trail) grow(n int) {
	t.n += n
	for len(t.act)*trailChunk < t.n {
		t.act = append(t.act, make([]uint8, trailChunk))
		t.kids = append(t.kids, make([]uint8, trailChunk))
	}
}

// truncate forgets the states numbered n and after, and the children
// recorded for the states not sealed.
func (t *trail) truncate(n int) {
	for q := t.sealed; q < t.n; q++ {
		t.kids[q>>trailChunkBits][q&(trailChunk-1)] = 0
	}
	t.n = n
}

// set records that state id was reached by its parent's act-th action.
// Safe for concurrent use on different ids.
func (t *trail) set(id uint32, act uint16) {
	c, k := id>>trailChunkBits, id&(trailChunk-1)
	if act >= wideByte {
		t.act[c][k] = wideByte
		t.wideMu.Lock()
		t.wide[id] = act
		t.wideMu.Unlock()
		return
	}
	t.act[c][k] = uint8(act)
}

// setKids records that n states were first reached from state id: the
// states numbered right after the children of the states below id. Safe
// for concurrent use on different ids.
func (t *trail) setKids(id uint32, n int) {
	c, k := id>>trailChunkBits, id&(trailChunk-1)
	if n >= wideByte {
		t.kids[c][k] = wideByte
		t.wideMu.Lock()
		t.wideK[id] = uint32(n)
		t.wideMu.Unlock()
		return
	}
	t.kids[c][k] = uint8(n)
}

func (t *trail) actOf(id uint32) uint16 {
	a := uint16(t.act[id>>trailChunkBits][id&(trailChunk-1)])
	if a == wideByte {
		a = t.wide[id]
	}
	return a
}

func (t *trail) kidsOf(id uint32) uint32 {
	n := uint32(t.kids[id>>trailChunkBits][id&(trailChunk-1)])
	if n == wideByte {
		n = t.wideK[id]
	}
	return n
}

// seal declares the children of the states below n all numbered, and
// extends the checkpoints over them. Not concurrent with setKids.
func (t *trail) seal(n int) {
	for q := t.sealed; q < n; q++ {
		if q%cpEvery == 0 {
			t.cp = append(t.cp, t.total)
		}
		t.total += t.kidsOf(uint32(q))
	}
	t.sealed = max(t.sealed, n)
}

// parentOf is the parent of state x (not 0); ok is false if x is not the
// child of a sealed state.
func (t *trail) parentOf(x uint32) (uint32, bool) {
	y := x - 1
	b := sort.Search(len(t.cp), func(b int) bool { return t.cp[b] > y }) - 1
	if b < 0 {
		return 0, false
	}
	q, c := uint32(b*cpEvery), t.cp[b]
	for int(q) < t.sealed {
		k := t.kidsOf(q)
		if c+k > y {
			return q, true
		}
		c += k
		q++
	}
	return 0, false
}

// get is state id's parent and action index (for tests).
func (t *trail) get(id uint32) (parent uint32, act uint16, ok bool) {
	parent, ok = t.parentOf(id)
	return parent, t.actOf(id), ok
}

// bytes is the memory the trail holds (the side maps estimated at 16 bytes
// an entry).
func (t *trail) bytes() int64 {
	return int64(len(t.act))*trailChunk*2 + int64(cap(t.cp))*4 + int64(len(t.wide)+len(t.wideK))*16
}

// path rebuilds the actions from the search's first state root (state 0)
// to state id, and the state it reaches, by replaying the recorded action
// indices.
func (t *trail) path(d *model.Design, root model.State, id uint32) ([]model.Action, model.State, error) {
	var idx []uint16
	for id != 0 {
		idx = append(idx, t.actOf(id))
		p, ok := t.parentOf(id)
		if !ok {
			return nil, model.State{}, fmt.Errorf("explore: internal error: state %d has no recorded parent", id)
		}
		id = p
	}
	s := root
	out := make([]model.Action, 0, len(idx)+1)
	var buf []model.Action
	for k := len(idx) - 1; k >= 0; k-- {
		buf = model.Actions(d, &s, buf)
		if int(idx[k]) >= len(buf) {
			return nil, s, fmt.Errorf("explore: internal error: step %d of a stored path names action %d of %d", len(out)+1, idx[k], len(buf))
		}
		a := buf[idx[k]]
		s, _ = model.Step(d, s, a)
		out = append(out, a)
	}
	return out, s, nil
}
