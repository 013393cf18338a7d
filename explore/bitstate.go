package explore

import (
	"fmt"
	"math"
	"math/bits"
)

// Bitstate search (SPIN's -DBITSTATE, Holzmann's supertrace): the visited
// set is an array of 2^Bounds.Bitstate bits instead of the 64-bit
// fingerprint table, and a state counts as visited when all bitHashes of
// its bits are set. The array does not grow, so a state space far larger
// than memory can be searched; the price is that a new state whose bits
// happen to be set already is taken for a visited one and not explored,
// nor what only it leads to. A bitstate search therefore never proves:
// a property that is not violated gets HoldsProbably (NotSeenProbably),
// with the expected number of such omissions in Stats.Bitstate. A
// violation it finds is as real as in the exact search: the trail is kept,
// and its trace is rebuilt and replayed through model.Step from the
// initial state. It is a shortest one among the states the search kept,
// which a missed state may have made longer than the true shortest.
//
// The array is split like the fingerprint table, by the fingerprint's top
// segBits bits, so that the merge's workers set bits in disjoint segments
// without locks; the bitHashes bits of a state all lie in its segment
// (a partitioned Bloom filter).
type bitSet struct {
	words   []uint64
	segLog  uint     // bits per segment: 1 << segLog
	set     []uint64 // per segment: bits set
	logBits int
	fill    float64 // fraction of bits set at the last account
	missed  float64 // expected new states taken for visited ones
	stored  int64   // new states accounted
}

// bitHashes is the number of bits set per state (SPIN's default -k3).
const bitHashes = 3

// MinBitstate and MaxBitstate bound Bounds.Bitstate (log2 of the bits):
// at least 256 bits a segment, at most 8 GB.
const (
	MinBitstate = segBits + 8
	MaxBitstate = 36
)

func newBitSet(logBits int) (*bitSet, error) {
	if logBits < MinBitstate || logBits > MaxBitstate {
		return nil, fmt.Errorf("explore: bitstate array of 2^%d bits: want 2^%d to 2^%d", logBits, MinBitstate, MaxBitstate)
	}
	return &bitSet{
		words:   make([]uint64, 1<<(logBits-6)),
		segLog:  uint(logBits - segBits),
		set:     make([]uint64, numSegs),
		logBits: logBits,
	}, nil
}

// insert sets fp's bits in segment g (segOf(fp)) and reports whether one
// was clear: the state is new. Concurrent inserts are safe only into
// different segments.
func (b *bitSet) insert(g int, fp uint64) bool {
	mask := uint64(1)<<b.segLog - 1
	off := uint64(g) << b.segLog
	h1, h2 := mix64(fp), mix64(^fp)|1 // mix64: simulate.go
	added := uint64(0)
	for i := uint64(0); i < bitHashes; i++ {
		k := off + (h1+i*h2)&mask
		w, bit := &b.words[k>>6], uint64(1)<<(k&63)
		if *w&bit == 0 {
			*w |= bit
			added++
		}
	}
	b.set[g] += added
	return added > 0
}

// account adds n new states kept since the last call: each one could have
// been missed with the chance that all its bits were set already, about
// fill^bitHashes (averaged over the fill before and after them).
func (b *bitSet) account(n int) {
	var set uint64
	for _, c := range b.set {
		set += c
	}
	f := float64(set) / float64(uint64(1)<<b.logBits)
	b.missed += float64(n) * (math.Pow(b.fill, bitHashes) + math.Pow(f, bitHashes)) / 2
	b.fill = f
	b.stored += int64(n)
}

func (b *bitSet) bytes() int64 { return int64(len(b.words)) * 8 }

// Bitstate describes a bitstate search (Bounds.Bitstate).
type Bitstate struct {
	LogBits int     // the array has 2^LogBits bits
	Hashes  int     // bits set per state
	Fill    float64 // fraction of the bits set at the end
	// Missed is the expected number of new states that were taken for
	// visited ones (all their bits already set) and not explored; the
	// states only they lead to were not reached either, which no estimate
	// counts.
	Missed float64
}

// Coverage is the expected share of the states reached that were
// explored: Distinct / (Distinct + Missed).
func (b Bitstate) Coverage(distinct int64) float64 {
	if distinct == 0 {
		return 1
	}
	return float64(distinct) / (float64(distinct) + b.Missed)
}

func (b *bitSet) stats() *Bitstate {
	return &Bitstate{LogBits: b.logBits, Hashes: bitHashes, Fill: b.fill, Missed: b.missed}
}

// onesCount counts the bits set (for tests).
func (b *bitSet) onesCount() int {
	n := 0
	for _, w := range b.words {
		n += bits.OnesCount64(w)
	}
	return n
}

// visit adds the initial state's fingerprint to the visited set.
func (e *engine) visit(fp uint64) {
	if e.bits != nil {
		e.bits.insert(segOf(fp), fp)
		e.bits.account(1)
		return
	}
	if e.cset != nil {
		e.cset.insert(fp)
		return
	}
	e.set.insert(fp)
}

// tableBytes is what the visited set holds.
func (e *engine) tableBytes() int64 {
	if e.bits != nil {
		return e.bits.bytes()
	}
	if e.cset != nil {
		return e.cset.bytes()
	}
	return e.set.bytes()
}
