package explore

// dedup.go: a cache, per worker, of the fingerprints its steps reached, so
// that a step reaching a state it has already reached is known not to be new
// before the merge, which then skips it (in the SPIN design over half of the
// steps: the two orders of a pair of independent steps usually come from
// states next to each other in the frontier, so from the same unit).
//
// Dropping such a step keeps every verdict, trace and count: a fingerprint
// in the cache went into the merge earlier in generation order, either in
// an earlier level (it is in the visited set) or in this level, from a unit
// this worker expanded before (a worker takes units in increasing order), or
// earlier in the same unit. So the dropped step was not the first to reach
// its state, and the merge would have found it not new. The cache is never
// cleared during a search: every fingerprint it holds is visited, or about
// to be at the end of the level. Properties and coverage are still checked
// on every step; only the fingerprint is left out of the merge.

// dupBits sets the cache's size: 1<<dupBits fingerprints (128 KiB) per
// worker, direct-mapped by the fingerprint's low bits (the visited set uses
// its high bits). On the SPIN design without symmetry (38.5 M steps, 27.2 M
// of them reaching a state already reached) the cache finds 13.7 M with 10
// bits, 16.8 M with 12, 19.0 M with 14, 20.5 M with 16 and 21.6 M with 18;
// measured in CPU seconds (machine load 28-31), 12 and 14 bits were alike
// and 16 bits about 10% slower: a cache that outgrows L2 costs more than
// the merge work it saves. The caches are not in the memory estimate
// (Stats.MemoryBytes), which must not depend on the number of workers.
const dupBits = 14

// dupStep marks, in a unit's fingerprints, a step the cache found not new.
// Fingerprints are never 0 (normFP).
const dupStep = 0

type dupCache struct {
	slots [1 << dupBits]uint64
}

// seen reports whether fp is in the cache, and puts it in.
func (c *dupCache) seen(fp uint64) bool {
	slot := &c.slots[fp&(1<<dupBits-1)]
	if *slot == fp {
		return true
	}
	*slot = fp
	return false
}
