package explore

import (
	"fmt"
	"math/rand/v2"
	"slices"
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

// canonical is the layout of an ordered linear-probing table of n home
// slots holding the sorted fps: each at max(its home, the slot after the
// previous one). grow and insert must produce exactly this.
func canonical(fps []uint64, n uint64) []uint64 {
	var out []uint64
	next := uint64(0)
	for _, v := range fps {
		i := max(home(v, n), next)
		for uint64(len(out)) <= i {
			out = append(out, 0)
		}
		out[i] = v
		next = i + 1
	}
	return out
}

// checkSegment fails unless g holds exactly the sorted fps, laid out as
// canonical says, with zeros after them (the last slot included) and the
// count right.
func checkSegment(t *testing.T, what string, g *fpSegment, fps []uint64) {
	t.Helper()
	want := canonical(fps, g.n)
	if len(want) >= len(g.slots) {
		t.Fatalf("%s: %d slots, the entries need %d and an empty last slot", what, len(g.slots), len(want))
	}
	for i, v := range g.slots {
		w := uint64(0)
		if i < len(want) {
			w = want[i]
		}
		if v != w {
			t.Fatalf("%s: slot %d of %d (n %d) is %#x, want %#x", what, i, len(g.slots), g.n, v, w)
		}
	}
	if g.count != len(fps) {
		t.Fatalf("%s: count %d, want %d", what, g.count, len(fps))
	}
}

// grow keeps every entry, in order, at its place in the bigger table, on
// its fast path (chunks far from the end) and its slow one (a cluster that
// runs past the home slots into the tail, which it extends): segments
// filled with random fingerprints and with fingerprints crowded at the top
// of the segment's range, at sizes from a few slots to a few thousand.
// Insert keeps the same layout after every insert.
func TestFPSegmentGrowAndInsertLayout(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const seg = 9
	for _, crowd := range []bool{false, true} {
		for _, size := range []int{3, 9, 40, 300, 5000} {
			g := fpSegment{slots: emptySeg[:], n: 1}
			var fps []uint64
			for len(fps) < size {
				low := rng.Uint64() >> segBits
				if crowd {
					low = 1<<(64-segBits) - 1 - rng.Uint64N(uint64(size)*4)
				}
				fp := normFP(seg<<(64-segBits) | low)
				if !g.insert(fp) {
					continue // a repeat
				}
				fps = append(fps, fp)
				slices.Sort(fps)
				if len(fps) < 50 || len(fps)%97 == 0 || len(fps) == size {
					checkSegment(t, fmt.Sprintf("crowd %v, insert %d", crowd, len(fps)), &g, fps)
				}
				if g.insert(fp) {
					t.Fatalf("%#x inserted twice", fp)
				}
			}
			for k := 0; k < 3; k++ {
				g.grow()
				checkSegment(t, fmt.Sprintf("crowd %v, %d entries, grow %d", crowd, size, k), &g, fps)
			}
		}
	}
}

// extend lengthens the tail and keeps the slots, both in the allocator's
// spare capacity and by copying when there is none; the new slots are
// empty.
func TestExtend(t *testing.T) {
	for _, spare := range []bool{true, false} {
		slots := newSlots(13)
		if !spare {
			slots = slots[:13:13]
		} else if cap(slots) == len(slots) {
			t.Fatalf("newSlots(13) has no spare capacity (cap %d)", cap(slots))
		}
		for i := range slots {
			slots[i] = uint64(100 + i)
		}
		out := extend(slots, 9)
		if len(out) <= 13 {
			t.Fatalf("spare %v: extend kept %d slots", spare, len(out))
		}
		for i, v := range out {
			want := uint64(0)
			if i < 13 {
				want = uint64(100 + i)
			}
			if v != want {
				t.Fatalf("spare %v: slot %d = %d, want %d", spare, i, v, want)
			}
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

// BenchmarkFPSetMerge inserts 4M distinct random fingerprints and as many
// repeats in 40 batches, each bucketed by segment and touched before its
// inserts as merge does:
//
//	go test ./explore -run '^$' -bench FPSetMerge -count 6
func BenchmarkFPSetMerge(b *testing.B) {
	const distinct, batches = 4 << 20, 40
	rng := rand.New(rand.NewPCG(3, 4))
	all := make([]uint64, 0, distinct)
	var levels [][][]uint64 // per batch, per segment
	for l := 0; l < batches; l++ {
		buckets := make([][]uint64, numSegs)
		for k := 0; k < distinct/batches; k++ {
			fp := normFP(rng.Uint64())
			all = append(all, fp)
			buckets[segOf(fp)] = append(buckets[segOf(fp)], fp)
			old := all[rng.IntN(len(all))]
			buckets[segOf(old)] = append(buckets[segOf(old)], old)
		}
		levels = append(levels, buckets)
	}
	cpu0 := cpuSeconds()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := newFPSet()
		var sink uint64
		for _, buckets := range levels {
			for g, fps := range buckets {
				seg := &s.segs[g]
				sink += seg.touch(fps)
				for _, fp := range fps {
					seg.insert(fp)
				}
			}
		}
		touchSink.Add(sink)
		b.ReportMetric(float64(s.bytes())/float64(s.len()), "B/state")
	}
	b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s/op")
}
