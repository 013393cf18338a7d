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
		g.slots, g.n = make([]uint64, n+tailPad), n
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
// slots, in one pass: the entries are already in order.
func (g *fpSegment) grow() {
	n := g.n * growNum / growDen
	if n <= g.n {
		n = g.n + 1
	}
	out := make([]uint64, n+tailPad)
	next := uint64(0) // first free slot
	for _, v := range g.slots {
		if v == 0 {
			continue
		}
		i := home(v, n)
		if i < next {
			i = next
		}
		if i >= uint64(len(out))-1 {
			out = extend(out, n)
		}
		out[i] = v
		next = i + 1
	}
	g.slots, g.n = out, n
}

// extend doubles the tail of a segment's slots (the part past its n home
// slots), allocating exactly.
func extend(slots []uint64, n uint64) []uint64 {
	out := make([]uint64, uint64(len(slots))+(uint64(len(slots))-n))
	copy(out, slots)
	return out
}

// bytes is the memory the table holds.
func (s *fpSet) bytes() int64 {
	var b int64
	for i := range s.segs {
		if c := cap(s.segs[i].slots); c > 1 {
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
