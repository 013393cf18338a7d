package explore

import (
	"math/rand/v2"
	"testing"

	"lockcheck/model"
)

// The set agrees with a map on random fingerprints, on fingerprints packed
// at the end of one segment (clusters that run off its home slots), and on
// 0 (stored as 1); each segment stays sorted with every entry at or after
// its home slot, and the load stays at or below 0.9.
func TestFPSetMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	s := newFPSet()
	ref := map[uint64]bool{}
	add := func(fp uint64) {
		n := normFP(fp)
		if got, want := s.insert(fp), !ref[n]; got != want {
			t.Fatalf("insert(%#x) = %v, want %v", fp, got, want)
		}
		ref[n] = true
	}
	for i := 0; i < 200000; i++ {
		add(rng.Uint64())
		if i%7 == 0 { // repeats
			add(rng.Uint64() % 1000)
		}
	}
	for i := uint64(0); i < 5000; i++ { // the last home slots of segment 5
		add(5<<(64-segBits) | (1<<(64-segBits) - 1 - i*3))
	}
	add(0)
	add(1)
	if s.len() != int64(len(ref)) {
		t.Fatalf("len %d, want %d", s.len(), len(ref))
	}
	for fp := range ref {
		if !s.contains(fp) {
			t.Fatalf("lost %#x", fp)
		}
	}
	for i := 0; i < 100000; i++ {
		fp := rng.Uint64()
		if s.contains(fp) != ref[normFP(fp)] {
			t.Fatalf("contains(%#x) = %v", fp, !ref[fp])
		}
	}
	for gi := range s.segs {
		g := &s.segs[gi]
		var prev uint64
		for i, v := range g.slots {
			if v == 0 {
				continue
			}
			if v <= prev || uint64(i) < home(v, g.n) || segOf(v) != gi {
				t.Fatalf("segment %d slot %d: %#x after %#x (home %d)", gi, i, v, prev, home(v, g.n))
			}
			prev = v
		}
		if g.slots[len(g.slots)-1] != 0 {
			t.Fatalf("segment %d: last slot used", gi)
		}
		if g.count > 0 && float64(g.count) > 0.9*float64(g.n) {
			t.Fatalf("segment %d: load %d/%d", gi, g.count, g.n)
		}
	}
}

// A state with more than 255 enabled actions records its action index in
// the trail's side map, and paths through it still rebuild. Five started
// clients with pauses up to 60 ticks have 5 + 5·60 + 1 actions; the planted
// condition (a tick after E paused 60 ticks once all had started) is
// reached through "E pause 60", index 5 + 4·60 + 59 = 304 of its state's
// actions. (Without symmetry: the condition names client E.)
func TestWideActionIndex(t *testing.T) {
	d := design(t, "redis/cad/none/plain,clients=5,max-pause=60,clock=free,horizon=2")
	tickAfterLongPause := model.Property{Name: "tick-after-long-pause", Expect: model.Always, Doc: "test",
		Bad: func(d *model.Design, s *model.State, ev *model.Event) bool {
			h := &s.Clients[4]
			if ev == nil || ev.Action.Kind != model.ActTick || h.Flags&model.FlagPaused == 0 || int(h.Ready)-int(s.Now) != 59 {
				return false
			}
			for i := 0; i < d.Clients; i++ {
				if s.Clients[i].Flags&model.FlagStarted == 0 {
					return false
				}
			}
			return true
		}}
	r := check(t, Config{Design: d, Properties: []model.Property{tickAfterLongPause}, Bounds: Bounds{MaxSteps: 7}})
	res := r.Results[0]
	if res.Status != Violated || len(res.Trace) != 7 {
		t.Fatalf("%v", res)
	}
	if got := res.Trace[5]; got != (model.Action{Kind: model.ActPause, Client: 4, Arg: 60}) {
		t.Fatalf("step 6 is %v, want E pause 60", got)
	}
	if _, err := model.Replay(&d, res.Trace); err != nil {
		t.Fatal(err)
	}
	tr := newTrail()
	tr.grow(300)
	tr.set(299, 300)
	tr.setKids(0, 299)
	tr.seal(300)
	if p, a, ok := tr.get(299); p != 0 || a != 300 || !ok {
		t.Fatalf("get = %d, %d, %v", p, a, ok)
	}
}
