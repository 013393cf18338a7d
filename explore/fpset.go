package explore

import (
	"math/bits"
)

// fpSet is the visited set: 64-bit state fingerprints in an ordered
// open-addressing table, 8 bytes a slot and no other per-entry data.
//
// The table is split into segments by the fingerprint's top segBits bits, so
// that each segment grows on its own (a small copy, not the whole table) and
// so that workers can insert into disjoint segments without locks.
//
// Within a segment, a fingerprint's home slot is a monotone function of it
// (the high word of fp·n, Lemire's range reduction), and every cluster is kept
// sorted (ordered linear probing, as in Amble and Knuth's ordered hash
// tables): a search stops at the first larger entry, so a miss costs about as
// little as a hit even at a load of 0.9, and the whole segment is sorted, so
// growing it is one sequential merge pass with no hashing. Slot value 0 means
// empty; fingerprint 0 is stored as 1.
type fpSet struct {
	segs [numSegs]fpSegment
}

const (
	segBits = 12
	numSegs = 1 << segBits
	// maxLoadNum/maxLoadDen is the load at which a segment grows; it grows
	// by growNum/growDen, so its load stays between about 0.72 and 0.9.
	// Each entry moves about growNum/(growNum-growDen) times as the table
	// grows (5 times; 9 with the 9/8 of before, whose load stayed above
	// 0.8): on the SPIN design without symmetry, one worker, 5/4 costs
	// 10.9% less CPU (benchstat n=5, p=0.016) and 0.06 more bytes a state
	// (11.63 → 11.69; 11.55 → 11.93 with symmetry: it depends on where
	// the segments are in their growth when the search ends).
	maxLoadNum, maxLoadDen = 9, 10
	growNum, growDen       = 5, 4
	minHome                = 8 // home slots of a new segment
	tailPad                = 4 // slots past the last home slot for clusters that run off the end
)

// fpSegment is one ordered table. slots has n home slots and a tail; its
// last slot is always empty, so every probe ends inside the slice.
type fpSegment struct {
	slots []uint64
	n     uint64 // home slots
	count int    // entries
}

func newFPSet() *fpSet {
	s := &fpSet{}
	for i := range s.segs {
		// an empty segment has one (empty) slot and allocates on its first
		// insert
		s.segs[i] = fpSegment{slots: emptySeg[:], n: 1}
	}
	return s
}

var emptySeg [1]uint64

// firstSize is segment g's first number of home slots. The sizes are
// staggered so that the segments do not all grow at the same moment: the
// average load then stays near the middle of its range instead of
// following one saw-tooth.
func firstSize(g int) uint64 { return uint64(minHome + minHome*g/numSegs) }

// normFP maps the reserved empty value 0 to 1.
func normFP(fp uint64) uint64 {
	if fp == 0 {
		return 1
	}
	return fp
}

func segOf(fp uint64) int { return int(fp >> (64 - segBits)) }

// home is fp's home slot among n: monotone in fp within one segment (the
// segment bits are shifted out first).
func home(fp, n uint64) uint64 {
	hi, _ := bits.Mul64(fp<<segBits, n)
	return hi
}

// contains reports whether fp is in the set.
func (s *fpSet) contains(fp uint64) bool {
	fp = normFP(fp)
	g := &s.segs[segOf(fp)]
	slots := g.slots
	i := home(fp, g.n)
	for {
		v := slots[i]
		if v >= fp || v == 0 {
			return v == fp
		}
		i++
	}
}

// insert adds fp and reports whether it was new. Concurrent inserts are safe
// only into different segments (see segOf); nobody may call contains
// meanwhile.
func (s *fpSet) insert(fp uint64) bool {
	fp = normFP(fp)
	return s.segs[segOf(fp)].insert(fp)
}

// insert adds fp (not 0) to the segment; false if it was there.
func (g *fpSegment) insert(fp uint64) bool {
	if g.count == 0 && len(g.slots) == 1 {
		n := firstSize(segOf(fp))
		g.slots, g.n = newSlots(int(n+tailPad)), n
	}
	slots := g.slots
	i := home(fp, g.n)
	for {
		v := slots[i]
		if v == fp {
			return false
		}
		if v == 0 || v > fp {
			break
		}
		i++
	}
	// shift the rest of the cluster one slot right to keep it sorted
	j := i
	for slots[j] != 0 {
		j++
	}
	if j == uint64(len(slots))-1 {
		// the cluster reached the last slot, which must stay empty
		slots = extend(slots, g.n)
		g.slots = slots
	}
	copy(slots[i+1:j+1], slots[i:j])
	slots[i] = fp
	g.count++
	if uint64(g.count)*maxLoadDen > g.n*maxLoadNum {
		g.grow()
	}
	return true
}

// touch reads the home slot of every fp and returns their sum: a prefetch.
func (g *fpSegment) touch(fps []uint64) uint64 {
	var sum uint64
	slots, n := g.slots, g.n
	for _, fp := range fps {
		sum += slots[home(fp, n)]
	}
	return sum
}

// grow moves the segment into a table with growNum/growDen as many home
// slots, in one pass: the entries are already in order. Each slot of the
// old table goes to max(its home, the first free slot), and the first free
// slot moves on past it unless it was empty (an empty slot writes 0 at the
// first free slot: harmless), so the loop has no branch that depends on the
// data. The k-th slot of a chunk lands at most k slots past max(the first
// free slot before the chunk, the home of the chunk's largest entry), so
// only the chunks that may come near the end of the table check for its
// last slot.
func (g *fpSegment) grow() {
	n := g.n * growNum / growDen
	if n <= g.n {
		n = g.n + 1
	}
	out := newSlots(int(n + tailPad))
	next := uint64(0) // first free slot
	const chunk = 64
	for old := g.slots; len(old) > 0; {
		c := old[:min(len(old), chunk)]
		old = old[len(c):]
		// the chunk's homes are at most its last entry's
		last := len(c) - 1
		for last > 0 && c[last] == 0 {
			last--
		}
		if max(next, home(c[last], n))+uint64(len(c)) < uint64(len(out))-1 {
			next = spread(out, c, n, next)
			continue
		}
		for _, v := range c {
			if v == 0 {
				continue
			}
			i := max(home(v, n), next)
			if i >= uint64(len(out))-1 {
				out = extend(out, n)
			}
			out[i] = v
			next = i + 1
		}
	}
	g.slots, g.n = out, n
}

// spread is grow's loop without checks: it places c's slots in out (n home
// slots) from the first free slot next on, and returns the new next. (Not
// inlined, the compiler keeps next in a register.)
//
//go:noinline
func spread(out, c []uint64, n, next uint64) uint64 {
	for _, v := range c {
		i := max(home(v, n), next)
		out[i] = v
		next = i + b2u(v != 0)
	}
	return next
}

// b2u is 1 for true, 0 for false (compiled without a branch).
func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// extend lengthens the tail of a segment's slots (the part past its n home
// slots): it doubles it, or, if the slots have spare capacity, takes as
// much of that as it needs up to the double, in place. The allocator rounds
// every allocation up to a size class (large ones to whole pages), and
// newSlots keeps that rounding as spare capacity, so extend seldom copies
// the whole segment (inserting 4M random fingerprints copies 0.7M slots
// instead of 12.1M).
func extend(slots []uint64, n uint64) []uint64 {
	size := uint64(len(slots)) + (uint64(len(slots)) - n)
	if len(slots) < cap(slots) {
		// the spare capacity was zeroed and has not been written since
		return slots[:min(size, uint64(cap(slots)))]
	}
	out := newSlots(int(size))
	copy(out, slots)
	return out
}

// newSlots returns size zero slots with the allocator's rounding as spare
// capacity (append rounds the capacity up to the size it allocates; the
// make in its argument does not allocate).
func newSlots(size int) []uint64 {
	return append([]uint64(nil), make([]uint64, size)...)
}

// bytes is the memory the table holds: its slots in use, as when each
// segment was allocated exactly (the allocator's rounding, kept as spare
// capacity, is not counted; it was there and not counted before either).
func (s *fpSet) bytes() int64 {
	var b int64
	for i := range s.segs {
		if c := len(s.segs[i].slots); c > 1 {
			b += int64(c) * 8
		}
	}
	return b
}

// len is the number of fingerprints in the set.
func (s *fpSet) len() int64 {
	var c int64
	for i := range s.segs {
		c += int64(s.segs[i].count)
	}
	return c
}
