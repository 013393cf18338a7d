package explore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"lockcheck/model"

	"pgregory.net/rapid"
)

// The set agrees with a map on random fingerprints, on fingerprints packed
// at the end of one segment (clusters that run off its home slots into the
// tail), and on 0 (stored as 1); every segment stays in its canonical
// layout and at a load of at most maxLoadNum/maxLoadDen.
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
		add(5<<lowBits | (1<<lowBits - 1 - i*3))
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
	byseg := make([][]uint64, numSegs)
	for fp := range ref {
		byseg[segOf(fp)] = append(byseg[segOf(fp)], fp)
	}
	for gi := range s.segs {
		g := &s.segs[gi]
		slices.Sort(byseg[gi])
		checkSegment(t, fmt.Sprintf("segment %d", gi), g, byseg[gi])
		if g.count > 0 && uint64(g.count)*maxLoadDen > g.n*maxLoadNum {
			t.Fatalf("segment %d: load %d/%d", gi, g.count, g.n)
		}
	}
}

// fataler is what checkSegment needs of *testing.T and *rapid.T.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// canonical is the layout of an ordered linear-probing table of n home
// slots holding the sorted fps: each at max(its home, the slot after the
// previous one). It returns each slot's entry (0: empty) and home.
func canonical(fps []uint64, n uint64) (slot []uint64, homes []uint64) {
	next := uint64(0)
	for _, v := range fps {
		h := home(v&lowMask, n)
		i := max(h, next)
		for uint64(len(slot)) <= i {
			slot = append(slot, 0)
			homes = append(homes, 0)
		}
		slot[i], homes[i] = v, h
		next = i + 1
	}
	return slot, homes
}

// checkSegment fails unless g holds exactly the sorted fps (of one
// segment), laid out as canonical says: the stored values, the used,
// occupied and run-end bits, the count, and what each reads back.
func checkSegment(t fataler, what string, g *fpSegment, fps []uint64) {
	t.Helper()
	if len(fps) == 0 {
		if g.count != 0 {
			t.Fatalf("%s: count %d, want 0", what, g.count)
		}
		return
	}
	slot, homes := canonical(fps, g.n)
	if uint64(len(slot)) > g.size {
		t.Fatalf("%s: %d slots, the entries need %d", what, g.size, len(slot))
	}
	occ := map[uint64]bool{}
	for i := uint64(0); i < g.size; i++ {
		var v, h uint64
		if i < uint64(len(slot)) {
			v, h = slot[i], homes[i]
		}
		if bit(g.used, i) != (v != 0) {
			t.Fatalf("%s: slot %d of %d (n %d): used %v, want %#x", what, i, g.size, g.n, bit(g.used, i), v)
		}
		if v == 0 {
			if bit(g.end, i) || g.get(i) != 0 {
				t.Fatalf("%s: empty slot %d has run end %v, value %#x", what, i, bit(g.end, i), g.get(i))
			}
			continue
		}
		occ[h] = true
		if got := g.get(i); got != v&lowMask-h*g.step {
			t.Fatalf("%s: slot %d holds %#x, want %#x", what, i, got, v&lowMask-h*g.step)
		}
		last := i+1 >= uint64(len(slot)) || slot[i+1] == 0 || homes[i+1] != h
		if bit(g.end, i) != last {
			t.Fatalf("%s: slot %d: run end %v, want %v", what, i, bit(g.end, i), last)
		}
	}
	for h := uint64(0); h < g.n; h++ {
		if bit(g.occ, h) != occ[h] {
			t.Fatalf("%s: home %d: occupied %v, want %v", what, h, bit(g.occ, h), occ[h])
		}
	}
	var got []uint64
	g.each(func(f uint64) bool { got = append(got, f); return true })
	for k := range fps {
		if k >= len(got) || got[k] != fps[k]&lowMask {
			t.Fatalf("%s: each gives %d entries, entry %d differs", what, len(got), k)
		}
	}
	if g.count != len(fps) || len(got) != len(fps) {
		t.Fatalf("%s: count %d, each %d, want %d", what, g.count, len(got), len(fps))
	}
}

// grow keeps every entry, in order, at its place in the bigger table,
// including clusters that run past the home slots into the tail (which it
// lengthens when they do not fit): segments filled with random
// fingerprints and with fingerprints crowded at the top of the segment's
// range, at sizes from a few slots to a few thousand. Insert keeps the same
// layout after every insert.
func TestFPSegmentGrowAndInsertLayout(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const seg = 9
	for _, crowd := range []bool{false, true} {
		for _, size := range []int{3, 9, 40, 300, 5000} {
			var g fpSegment
			var fps []uint64
			for len(fps) < size {
				low := rng.Uint64() >> segBits
				if crowd {
					low = 1<<lowBits - 1 - rng.Uint64N(uint64(size)*4)
				}
				fp := normFP(seg<<lowBits | low)
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

// The property: any sequence of inserts and lookups, of fingerprints drawn
// from one segment's narrow ranges (long clusters, the tail) or anywhere,
// answers as a map does and leaves every segment in its canonical layout.
func TestFPSetProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := newFPSet()
		ref := map[uint64]bool{}
		seg := rapid.Uint64Range(0, numSegs-1).Draw(t, "seg")
		base := rapid.Uint64Range(0, lowMask).Draw(t, "base")
		spread := rapid.Uint64Range(1, 1<<lowBits).Draw(t, "spread")
		fp := rapid.Custom(func(t *rapid.T) uint64 {
			if rapid.Bool().Draw(t, "anywhere") {
				return rapid.Uint64().Draw(t, "fp")
			}
			return seg<<lowBits | (base+rapid.Uint64Range(0, spread-1).Draw(t, "off"))&lowMask
		})
		ops := rapid.IntRange(1, 3000).Draw(t, "ops")
		for range ops {
			v := fp.Draw(t, "v")
			if rapid.IntRange(0, 3).Draw(t, "op") == 0 {
				if got, want := s.contains(v), ref[normFP(v)]; got != want {
					t.Fatalf("contains(%#x) = %v, want %v", v, got, want)
				}
				continue
			}
			if got, want := s.insert(v), !ref[normFP(v)]; got != want {
				t.Fatalf("insert(%#x) = %v, want %v", v, got, want)
			}
			ref[normFP(v)] = true
		}
		if s.len() != int64(len(ref)) {
			t.Fatalf("len %d, want %d", s.len(), len(ref))
		}
		var mine []uint64
		for v := range ref {
			if segOf(v) == int(seg) {
				mine = append(mine, v)
			}
		}
		slices.Sort(mine)
		checkSegment(t, "the drawn segment", &s.segs[seg], mine)
	})
}

// The word operations agree with bit-by-bit ones on random words and
// ranges: shiftUp, countBits, selectFrom, nextSet.
func TestFPSetBitOps(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for range 20000 {
		a := make([]uint64, 1+rng.IntN(4))
		for i := range a {
			a[i] = rng.Uint64() & rng.Uint64()
		}
		nb := uint64(len(a)) * 64
		p := rng.Uint64N(nb)
		q := p + rng.Uint64N(nb-p)
		b := slices.Clone(a)
		shiftUp(b, p, q)
		for i := uint64(0); i < nb; i++ {
			want := bit(a, i)
			switch {
			case i == p && q > p:
				want = false
			case i > p && i <= q:
				want = bit(a, i-1)
			}
			if bit(b, i) != want {
				t.Fatalf("shiftUp(%x, %d, %d): bit %d = %v", a, p, q, i, bit(b, i))
			}
		}
		c := 0
		for i := p; i < q; i++ {
			if bit(a, i) {
				c++
			}
		}
		if got := countBits(a, p, q); got != c {
			t.Fatalf("countBits(%x, %d, %d) = %d, want %d", a, p, q, got, c)
		}
		next, k := nb, 0
		for i := p; i < nb; i++ {
			if bit(a, i) {
				if next == nb {
					next = i
				}
				k++
				if got := selectFrom(a, p, k); got != i {
					t.Fatalf("selectFrom(%x, %d, %d) = %d, want %d", a, p, k, got, i)
				}
			}
		}
		if got := nextSet(a, p); got != next {
			t.Fatalf("nextSet(%x, %d) = %d, want %d", a, p, got, next)
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
}

// BenchmarkFPSetContains looks up fingerprints in a set of 8M, half of
// them present, bucketed by segment as merge does.
func BenchmarkFPSetContains(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	s := newFPSet()
	buckets := make([][]uint64, numSegs)
	for range 8 << 20 {
		fp := normFP(rng.Uint64())
		s.insert(fp)
		if rng.IntN(8) == 0 {
			buckets[segOf(fp)] = append(buckets[segOf(fp)], fp)
			q := normFP(rng.Uint64())
			buckets[segOf(q)] = append(buckets[segOf(q)], q)
		}
	}
	b.ResetTimer()
	n := 0
	for i := 0; i < b.N; i++ {
		for _, fps := range buckets {
			for _, fp := range fps {
				if s.contains(fp) {
					n++
				}
			}
		}
	}
	b.ReportMetric(float64(n)/float64(b.N), "found/op")
}
