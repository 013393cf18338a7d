package explore

import (
	"fmt"
	"sync"

	"lockcheck/model"
)

// trail keeps, for every visited state, what is needed to rebuild the
// shortest path to it: its parent's id (4 bytes) and the index of the
// action among the parent's enabled actions (1 byte). States are numbered
// in breadth-first order, so a state's parent always has a smaller id; the
// initial state is id 0.
//
// The action index is the position in model.Actions of the parent state
// that was actually reached (not its canonical form), so a path of indices
// replays from model.Init as it is. Indices of 255 and above are rare (a
// state has that many actions only with long pauses and many clients) and
// go to a side map.
type trail struct {
	parent [][]uint32 // chunks of trailChunk
	act    [][]uint8
	wideMu sync.Mutex
	wide   map[uint32]uint16 // action index of the states whose act byte is wideAct
	n      int               // ids in use
}

const (
	trailChunkBits = 14
	trailChunk     = 1 << trailChunkBits
	wideAct        = 255
	rootParent     = ^uint32(0)
)

func newTrail() *trail {
	t := &trail{wide: map[uint32]uint16{}}
	t.grow(1)
	t.set(0, rootParent, 0)
	return t
}

// grow numbers n more states: ids t.n … t.n+n-1, to be filled by set.
func (t *trail) grow(n int) {
	t.n += n
	for len(t.parent)*trailChunk < t.n {
		t.parent = append(t.parent, make([]uint32, trailChunk))
		t.act = append(t.act, make([]uint8, trailChunk))
	}
}

// truncate forgets the states numbered n and after.
func (t *trail) truncate(n int) {
	t.n = n
}

// set records that state id was reached from parent by its act-th action.
// Safe for concurrent use on different ids.
func (t *trail) set(id, parent uint32, act uint16) {
	c, k := id>>trailChunkBits, id&(trailChunk-1)
	t.parent[c][k] = parent
	if act >= wideAct {
		t.act[c][k] = wideAct
		t.wideMu.Lock()
		t.wide[id] = act
		t.wideMu.Unlock()
		return
	}
	t.act[c][k] = uint8(act)
}

func (t *trail) get(id uint32) (parent uint32, act uint16) {
	c, k := id>>trailChunkBits, id&(trailChunk-1)
	parent, act = t.parent[c][k], uint16(t.act[c][k])
	if act == wideAct {
		act = t.wide[id]
	}
	return parent, act
}

// bytes is the memory the trail holds (the side map estimated at 16 bytes
// an entry).
func (t *trail) bytes() int64 {
	return int64(len(t.parent))*trailChunk*5 + int64(len(t.wide))*16
}

// path rebuilds the actions from the initial state to state id, and the
// state it reaches, by replaying the recorded action indices.
func (t *trail) path(d *model.Design, id uint32) ([]model.Action, model.State, error) {
	var idx []uint16
	for id != 0 {
		p, a := t.get(id)
		idx = append(idx, a)
		id = p
	}
	s := model.Init(d)
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
