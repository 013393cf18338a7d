package explore

import (
	"encoding/binary"
	"math/bits"
)

// cpSet is the compact visited set (Bounds.Compact; fpSet otherwise): 64-bit
// state fingerprints in a compact ordered
// hash table (a quotient filter: Cleary's compact hashing, in the layout of
// Bender et al.'s quotient filter with Pandey et al.'s run-end bits), which
// keeps of each fingerprint only the bits its slot does not imply.
//
// The table is split into segments by the fingerprint's top segBits bits, so
// that each segment grows on its own (a small copy, not the whole table) and
// so that workers can insert into disjoint segments without locks. The
// segment bits are implied by the segment.
//
// Within a segment, a fingerprint's low 52 bits f have a home slot that is a
// monotone function of f (h = ⌊f·n/2^52⌋, Lemire's range reduction, for n
// home slots), and the entries are kept in order of f, each at the first
// free slot from its home on (ordered linear probing, as in Amble and
// Knuth's ordered hash tables): the entries of one home are one run of
// consecutive slots, the runs are in order of their homes, and the whole
// segment is sorted, so growing it is one sequential pass. A slot stores
// only f − h·⌊2^52/n⌋, which is below ⌊2^52/n⌋ + n: about 52 − log2(n) bits,
// rounded up to whole bytes (5 bytes a slot past 4096 home slots, which a
// segment has past 16.7 M states in the table). Three bits a slot say
// where the runs are: occupied (bit h: some entry has home h), used (slot i
// holds an entry) and run end (slot i holds its home's last entry). The
// run of home h is the k-th run of its cluster (the used slots around h),
// k the number of occupied homes from the cluster's first slot to h: a few
// popcounts on words of bits that stay in cache.
//
// A segment grows by cpGrowNum/cpGrowDen when more than cpMaxLoadNum/cpMaxLoadDen
// of its home slots hold entries, so its load stays between about 0.76 and
// 0.95; its tail doubles when a cluster would run past its last slot.
type cpSet struct {
	segs [numSegs]cpSegment
}

const (
	lowBits = 64 - segBits // the bits of a fingerprint below its segment's
	lowMask = 1<<lowBits - 1
	// cpMaxLoadNum/cpMaxLoadDen is the load at which a segment grows; it grows
	// by cpGrowNum/cpGrowDen.
	cpMaxLoadNum, cpMaxLoadDen = 19, 20
	cpGrowNum, cpGrowDen       = 5, 4
)

// cpSegment is one compact ordered table: n home slots and a tail, size
// slots in all (a multiple of 64).
type cpSegment struct {
	rem   []byte   // slot i's stored value, little-endian in rem[i*w : i*w+w], and 8 bytes of padding
	occ   []uint64 // bit h: some entry has home h
	used  []uint64 // bit i: slot i holds an entry
	end   []uint64 // bit i: slot i holds the last entry of its home's run
	n     uint64   // home slots; 0: the segment has not been allocated
	size  uint64   // slots
	step  uint64   // ⌊2^52/n⌋: slot value = f − home·step
	w     uint64   // bytes a slot value
	mask  uint64   // the low 8w bits
	count int      // entries
}

func newCPSet() *cpSet { return &cpSet{} }

// tailSlots is the first tail of a segment of n home slots: room for the
// clusters that run past the last home slot.
func tailSlots(n uint64) uint64 { return 64 }

// newCPSegment returns an empty segment of n home slots and at least size
// slots in all.
func newCPSegment(n, size uint64) cpSegment {
	step := uint64(1<<lowBits) / n
	w := uint64(bits.Len64(step+n)+7) / 8
	size = (max(size, n+1) + 63) &^ 63
	g := cpSegment{n: n, size: size, step: step, w: w, mask: ^uint64(0) >> (64 - 8*w)}
	g.rem = make([]byte, size*w+8)
	g.occ = make([]uint64, (n+63)/64)
	g.used = make([]uint64, size/64)
	g.end = make([]uint64, size/64)
	return g
}

func (g *cpSegment) get(i uint64) uint64 {
	return binary.LittleEndian.Uint64(g.rem[i*g.w:]) & g.mask
}

func (g *cpSegment) put(i, v uint64) {
	p := g.rem[i*g.w:]
	binary.LittleEndian.PutUint64(p, binary.LittleEndian.Uint64(p)&^g.mask|v)
}

func bit(a []uint64, i uint64) bool { return a[i>>6]>>(i&63)&1 != 0 }
func setBit(a []uint64, i uint64)   { a[i>>6] |= 1 << (i & 63) }
func clearBit(a []uint64, i uint64) { a[i>>6] &^= 1 << (i & 63) }

// clusterStart is the first slot of the cluster of used slots that holds
// slot h (which is used).
func (g *cpSegment) clusterStart(h uint64) uint64 {
	i := h >> 6
	m := ^g.used[i] & (2<<(h&63) - 1) // the free slots at or before h in its word
	for m == 0 {
		if i == 0 {
			return 0
		}
		i--
		m = ^g.used[i]
	}
	return i<<6 + 64 - uint64(bits.LeadingZeros64(m))
}

// countBits is the number of bits of a set in [lo, hi).
func countBits(a []uint64, lo, hi uint64) int {
	if lo >= hi {
		return 0
	}
	i, j := lo>>6, (hi-1)>>6
	first := a[i] &^ (1<<(lo&63) - 1)
	if i == j {
		return bits.OnesCount64(first & (^uint64(0) >> (63 - (hi-1)&63)))
	}
	c := bits.OnesCount64(first)
	for k := i + 1; k < j; k++ {
		c += bits.OnesCount64(a[k])
	}
	return c + bits.OnesCount64(a[j]&(^uint64(0)>>(63-(hi-1)&63)))
}

// selectFrom is the position of the k-th (k ≥ 1) bit of a set at or after
// lo; the caller knows it exists.
func selectFrom(a []uint64, lo uint64, k int) uint64 {
	i := lo >> 6
	m := a[i] &^ (1<<(lo&63) - 1)
	for {
		if c := bits.OnesCount64(m); k > c {
			k -= c
			i++
			m = a[i]
			continue
		}
		for ; k > 1; k-- {
			m &= m - 1
		}
		return i<<6 + uint64(bits.TrailingZeros64(m))
	}
}

// nextSet is the first bit of a set at or after lo, or 64·len(a).
func nextSet(a []uint64, lo uint64) uint64 {
	i := lo >> 6
	if i >= uint64(len(a)) {
		return uint64(len(a)) << 6
	}
	m := a[i] &^ (1<<(lo&63) - 1)
	for m == 0 {
		i++
		if i >= uint64(len(a)) {
			return uint64(len(a)) << 6
		}
		m = a[i]
	}
	return i<<6 + uint64(bits.TrailingZeros64(m))
}

// nextFree is the first free slot at or after p, or g.size (also for p =
// g.size: find's place past a run that ends in the last slot).
func (g *cpSegment) nextFree(p uint64) uint64 {
	if p >= g.size {
		return g.size
	}
	i := p >> 6
	m := ^g.used[i] &^ (1<<(p&63) - 1)
	for m == 0 {
		i++
		if i >= uint64(len(g.used)) {
			return g.size
		}
		m = ^g.used[i]
	}
	return i<<6 + uint64(bits.TrailingZeros64(m))
}

// shiftUp moves bits p … q-1 of a to p+1 … q and clears bit p; the other
// bits stay.
func shiftUp(a []uint64, p, q uint64) {
	if q <= p {
		return
	}
	wp, wq := p>>6, q>>6
	for i := wq; ; i-- {
		x := a[i]
		y := x << 1
		if i > wp {
			y |= a[i-1] >> 63
		}
		lo, hi := uint64(0), uint64(63)
		if i == wp {
			lo = p&63 + 1
		}
		if i == wq {
			hi = q & 63
		}
		if lo <= hi {
			m := ^uint64(0) >> (63 - hi) &^ (1<<lo - 1)
			x = x&^m | y&m
		}
		if i == wp {
			a[i] = x &^ (1 << (p & 63))
			return
		}
		a[i] = x
	}
}

// find looks for the low bits f (home h, slot value v) in the segment. It
// returns whether f is there, and else the slot p where it would go, and
// whether that is just past the last entry of its home's run (so that p-1
// no longer ends the run); occupied says whether the home has entries.
func (g *cpSegment) find(h, v uint64) (found bool, p uint64, after, occupied bool) {
	if !bit(g.used, h) {
		return false, h, false, false
	}
	c := g.clusterStart(h)
	p = c
	if k := countBits(g.occ, c, h); k > 0 {
		p = selectFrom(g.end, c, k) + 1
	}
	if !bit(g.occ, h) {
		return false, p, false, false
	}
	for {
		x := g.get(p)
		if x >= v {
			return x == v, p, false, true
		}
		if bit(g.end, p) {
			return false, p + 1, true, true
		}
		p++
	}
}

// contains reports whether fp is in the set.
func (s *cpSet) contains(fp uint64) bool {
	fp = normFP(fp)
	g := &s.segs[segOf(fp)]
	if g.n == 0 {
		return false
	}
	f := fp & lowMask
	h := home(f, g.n)
	found, _, _, _ := g.find(h, f-h*g.step)
	return found
}

// insert adds fp and reports whether it was new. Concurrent inserts are safe
// only into different segments (see segOf); nobody may call contains
// meanwhile.
func (s *cpSet) insert(fp uint64) bool {
	fp = normFP(fp)
	return s.segs[segOf(fp)].insert(fp)
}

// insert adds fp to the segment; false if it was there.
func (g *cpSegment) insert(fp uint64) bool {
	if g.n == 0 {
		n := firstSize(segOf(fp))
		*g = newCPSegment(n, n+tailSlots(n))
	}
	f := fp & lowMask
	for {
		h := home(f, g.n)
		v := f - h*g.step
		found, p, after, occupied := g.find(h, v)
		if found {
			return false
		}
		q := g.nextFree(p)
		if q >= g.size {
			// the cluster would run past the last slot: a longer tail
			g.resize(g.n, g.size+(g.size-g.n))
			continue
		}
		// shift slots p … q-1 up by one to keep the segment in order
		if q > p {
			w := g.w
			copy(g.rem[(p+1)*w:(q+1)*w], g.rem[p*w:q*w])
			shiftUp(g.end, p, q)
		}
		setBit(g.used, q)
		g.put(p, v)
		switch {
		case !occupied: // a run of its own
			setBit(g.occ, h)
			setBit(g.end, p)
		case after: // the last of its run
			clearBit(g.end, p-1)
			setBit(g.end, p)
		}
		g.count++
		if uint64(g.count)*cpMaxLoadDen > g.n*cpMaxLoadNum {
			g.grow()
		}
		return true
	}
}

// touch reads the home slot of every fp and returns their sum: a prefetch.
func (g *cpSegment) touch(fps []uint64) uint64 {
	if g.n == 0 {
		return 0
	}
	var sum uint64
	rem, n, w := g.rem, g.n, g.w
	used, occ, end := g.used, g.occ, g.end
	for _, fp := range fps {
		h := home(fp&lowMask, n)
		sum += uint64(rem[h*w]) + used[h>>6] + occ[h>>6] + end[h>>6]
	}
	return sum
}

// each calls f with the low bits of every entry, in order, until it returns
// false; each reports whether it went through.
func (g *cpSegment) each(f func(uint64) bool) bool {
	if g.count == 0 {
		return true
	}
	h := nextSet(g.occ, 0) // the current run's home
	for wi, word := range g.used {
		for word != 0 {
			i := uint64(wi)<<6 + uint64(bits.TrailingZeros64(word))
			word &= word - 1
			if !f(h*g.step + g.get(i)) {
				return false
			}
			if bit(g.end, i) {
				h = nextSet(g.occ, h+1)
			}
		}
	}
	return true
}

// cpBuilder lays out a segment from its entries in order: each goes to the
// first free slot from its home on.
type cpBuilder struct {
	g    *cpSegment
	next uint64 // first free slot
	prev uint64 // the slot of the last entry added
	ph   uint64 // its home
}

// add places f (larger than every entry before it); false if it would run
// past the segment's slots.
func (b *cpBuilder) add(f uint64) bool {
	g := b.g
	h := home(f, g.n)
	i := max(h, b.next)
	if i >= g.size {
		return false
	}
	if g.count == 0 || h != b.ph {
		if g.count > 0 {
			setBit(g.end, b.prev)
		}
		setBit(g.occ, h)
	}
	g.put(i, f-h*g.step)
	setBit(g.used, i)
	g.count++
	b.next, b.prev, b.ph = i+1, i, h
	return true
}

// finish closes the last run.
func (b *cpBuilder) finish() {
	if b.g.count > 0 {
		setBit(b.g.end, b.prev)
	}
}

// grow moves the segment into one with cpGrowNum/cpGrowDen as many home slots
// and the same tail (a tail that a cluster needed once is likely to be
// needed again: the table keeps its load).
func (g *cpSegment) grow() {
	n := max(g.n*cpGrowNum/cpGrowDen, g.n+1)
	g.resize(n, n+tailSlots(n))
}

// resize moves the segment into one of n home slots and at least size
// slots (more if its clusters need them), in one pass: the entries are
// already in order, and each goes to the first free slot from its new home
// on (cpBuilder.add, written out here: this loop is most of a segment's
// inserting cost).
func (g *cpSegment) resize(n, size uint64) {
	for {
		out := newCPSegment(n, size)
		if g.moveTo(&out) {
			*g = out
			return
		}
		size += size - n
	}
}

// moveTo lays out g's entries in the empty segment out; false if they run
// past its slots. The entries' new slots and homes only grow, so the
// used and run-end bits are gathered a word at a time, and each value is
// stored with one 8-byte write (the bytes past it belong to slots not yet
// written, which are zero).
func (g *cpSegment) moveTo(out *cpSegment) bool {
	if g.count == 0 {
		return true
	}
	// the current run's home in g: h, the next ones in ow (the bits of its
	// word of g.occ above it) and after it
	h := nextSet(g.occ, 0)
	ow, oi := g.occ[h>>6]&^(2<<(h&63)-1), h>>6
	base := h * g.step
	on, ostep, osize, ow8 := out.n, out.step, out.size, out.w
	orem, oocc := out.rem, out.occ
	next, ph := uint64(0), ^uint64(0)
	var uw, ew uint64 // the used and run-end bits of out's word cw
	cw := uint64(0)
	prev, started := uint64(0), uint64(0) // started: 1 once an entry is placed
	for wi, word := range g.used {
		ends := g.end[wi]
		for word != 0 {
			tz := uint64(bits.TrailingZeros64(word))
			word &= word - 1
			f := base + g.get(uint64(wi)<<6+tz)
			nh := home(f, on)
			j := max(nh, next)
			if j >= osize {
				return false
			}
			// without branches on the data: prev ends its run (it is in
			// word cw) if this entry has another home
			ew |= b2u(nh != ph) & started << (prev & 63)
			oocc[nh>>6] |= 1 << (nh & 63)
			ph = nh
			if j>>6 != cw {
				out.used[cw], out.end[cw] = uw, ew
				cw, uw, ew = j>>6, 0, 0
			}
			uw |= 1 << (j & 63)
			binary.LittleEndian.PutUint64(orem[j*ow8:], f-nh*ostep)
			next, prev, started = j+1, j, 1
			if ends>>tz&1 != 0 {
				// the next home: in ow but for the last of a word
				for ow == 0 && oi+1 < uint64(len(g.occ)) {
					oi++
					ow = g.occ[oi]
				}
				h = oi<<6 + uint64(bits.TrailingZeros64(ow))
				ow &= ow - 1
				base = h * g.step
			}
		}
	}
	ew |= 1 << (prev & 63)
	out.used[cw], out.end[cw] = uw, ew
	out.count = g.count
	return true
}

// bytes is the memory the table holds.
func (s *cpSet) bytes() int64 {
	var b int64
	for i := range s.segs {
		b += s.segs[i].bytes()
	}
	return b
}

func (g *cpSegment) bytes() int64 {
	return int64(len(g.rem)) + 8*int64(len(g.occ)+len(g.used)+len(g.end))
}

// len is the number of fingerprints in the set.
func (s *cpSet) len() int64 {
	var c int64
	for i := range s.segs {
		c += int64(s.segs[i].count)
	}
	return c
}
