package explore

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// The set agrees with a map on random fingerprints, on fingerprints packed
// at the end of one segment (clusters that run off its home slots into the
// tail), and on 0 (stored as 1); every segment stays in its cpCanonical
// layout and at a load of at most cpMaxLoadNum/cpMaxLoadDen.
func TestCPSetMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	s := newCPSet()
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
		checkCPSegment(t, fmt.Sprintf("segment %d", gi), g, byseg[gi])
		if g.count > 0 && uint64(g.count)*cpMaxLoadDen > g.n*cpMaxLoadNum {
			t.Fatalf("segment %d: load %d/%d", gi, g.count, g.n)
		}
	}
}

// fataler is what checkCPSegment needs of *testing.T and *rapid.T.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// cpCanonical is the layout of an ordered linear-probing table of n home
// slots holding the sorted fps: each at max(its home, the slot after the
// previous one). It returns each slot's entry (0: empty) and home.
func cpCanonical(fps []uint64, n uint64) (slot []uint64, homes []uint64) {
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

// checkCPSegment fails unless g holds exactly the sorted fps (of one
// segment), laid out as cpCanonical says: the stored values, the used,
// occupied and run-end bits, the count, and what each reads back.
func checkCPSegment(t fataler, what string, g *cpSegment, fps []uint64) {
	t.Helper()
	if len(fps) == 0 {
		if g.count != 0 {
			t.Fatalf("%s: count %d, want 0", what, g.count)
		}
		return
	}
	slot, homes := cpCanonical(fps, g.n)
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
func TestCPSegmentGrowAndInsertLayout(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const seg = 9
	for _, crowd := range []bool{false, true} {
		for _, size := range []int{3, 9, 40, 300, 5000} {
			var g cpSegment
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
					checkCPSegment(t, fmt.Sprintf("crowd %v, insert %d", crowd, len(fps)), &g, fps)
				}
				if g.insert(fp) {
					t.Fatalf("%#x inserted twice", fp)
				}
			}
			for k := 0; k < 3; k++ {
				g.grow()
				checkCPSegment(t, fmt.Sprintf("crowd %v, %d entries, grow %d", crowd, size, k), &g, fps)
			}
		}
	}
}

// A run that ends in the segment's last slot: an insert after its last
// entry goes one past the slots, and the segment lengthens its tail (it
// indexed past its bits before).
func TestCPSegmentRunEndsInLastSlot(t *testing.T) {
	const seg = 3
	g := newCPSegment(8, 64) // 8 home slots, 64 slots
	b := cpBuilder{g: &g}
	var fps []uint64
	// 57 entries of home 7 (the last) fill slots 7 … 63
	for i := uint64(0); i < 57; i++ {
		f := 7*g.step + i*1000
		if !b.add(f) {
			t.Fatalf("entry %d did not fit", i)
		}
		fps = append(fps, seg<<lowBits|f)
	}
	b.finish()
	if !bit(g.end, 63) {
		t.Fatal("the run does not end in the last slot")
	}
	checkCPSegment(t, "built", &g, fps)
	fp := uint64(seg<<lowBits | (7*g.step + 57*1000))
	if !g.insert(fp) {
		t.Fatalf("%#x: not new", fp)
	}
	fps = append(fps, fp)
	checkCPSegment(t, "after the insert", &g, fps)
}

// The property: any sequence of inserts and lookups, of fingerprints drawn
// from one segment's narrow ranges (long clusters, the tail) or anywhere,
// answers as a map does and leaves every segment in its cpCanonical layout.
func TestCPSetProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := newCPSet()
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
		checkCPSegment(t, "the drawn segment", &s.segs[seg], mine)
	})
}

// The word operations agree with bit-by-bit ones on random words and
// ranges: shiftUp, countBits, selectFrom, nextSet.
func TestCPSetBitOps(t *testing.T) {
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

// BenchmarkCPSetMerge inserts 4M distinct random fingerprints and as many
// repeats in 40 batches, each bucketed by segment and touched before its
// inserts as merge does:
//
//	go test ./explore -run '^$' -bench SetMerge -count 6
func BenchmarkCPSetMerge(b *testing.B) {
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
		s := newCPSet()
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

// BenchmarkCPSetContains looks up fingerprints in a set of 8M, half of
// them present, bucketed by segment as merge does.
func BenchmarkCPSetContains(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	s := newCPSet()
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

// A search with the compact table gives the same report as with the
// default one (states, transitions, depth, coverage, verdicts, traces) on
// designs with violations, witnesses, symmetry or not and two workers.
// (Its bytes a state are fewer only past a few million states: a small
// segment's slots are wider and its tail a larger share.)
func TestCompactGivesTheSameReports(t *testing.T) {
	for _, c := range []struct {
		name string
		b    Bounds
	}{
		{"demo2", Bounds{Symmetry: true}},
		{"demo6", Bounds{}},
		{"redis/del/none/plain,clients=2,crashes=1,slow=1", Bounds{Symmetry: true, Workers: 2}},
		{"redis/cad/none/plain,clients=2,delays=1,timeout=3,losses=1", Bounds{Symmetry: true}},
		{"redlock/cad/none/plain", Bounds{Symmetry: true, Workers: 2}},
	} {
		d := design(t, c.name)
		want := check(t, Config{Design: d, Bounds: c.b})
		b := c.b
		b.Compact = true
		got := check(t, Config{Design: d, Bounds: b})
		what := fmt.Sprintf("%s %+v", c.name, c.b)
		sameReport(t, what, want, got)
		if want.Coverage != got.Coverage {
			t.Errorf("%s: coverage differs", what)
		}
	}
}

// A checkpoint of format version 1 (the table before the compact one was
// added) is refused with the one-line version error.
func TestCheckpointVersion1Refused(t *testing.T) {
	d := design(t, "demo2")
	dir := t.TempDir()
	check(t, Config{Design: d, Bounds: Bounds{Symmetry: true, MaxSteps: 6}, Checkpoint: &Checkpoint{Dir: dir, Every: 1}})
	path := filepath.Join(dir, CheckpointFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint32(b[len(checkpointMagic):], 1)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Check(Config{Design: d, Bounds: Bounds{Symmetry: true, MaxSteps: 6}, Resume: dir})
	if err == nil || !strings.Contains(err.Error(), "format version 1; this program reads version 2") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("resume from a version-1 file: %v", err)
	}
}
