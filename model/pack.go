package model

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// pack.go: a state packed to the bytes its design uses, for the search's
// frontier. State reserves MaxClients client slots and MaxNodes node
// slots, and a field for every feature; a design uses only its first
// d.Clients clients and its lock service's first lockNodes(d) nodes (and,
// with fsync=N, the next as the disk image), and of each client and of the
// storage and budgets only the fields its features set (usedFields). The
// others stay zero. The packed form is the kept bytes in State's own
// order: 45 bytes instead of 200 for three clients on one Redis node
// with one pause (the SPIN design). Pack checks that every byte it leaves
// out is zero, so that a field the rules below forget is an error the
// search sees (it then searches again with WidePacking), never a state
// silently changed.
// Fingerprint hashes the used client slots and everything after them in
// place, whatever the packing.

const (
	clientBytes = int(unsafe.Sizeof(Client{}))
	nodeBytes   = int(unsafe.Sizeof(Node{}))
	nodesOff    = int(unsafe.Offsetof(State{}.Nodes))
	restOff     = nodesOff + MaxNodes*nodeBytes
	stateWords  = stateSize / 8
)

// State is whole 8-byte words (Pack's zero check reads it by words).
const _ = uint(stateWords*8 - stateSize)

// piece is a run of kept bytes inside one 8-byte word of the State:
// State offset from, packed offset to, length n; word is the offset of
// that word and shift the piece's place in it in bits; at is the packed
// offset of the 8 bytes Unpack reads it from (to, or the last 8 bytes of
// the packed state) and atShift its place there; mask is the mask of n
// bytes.
type piece struct {
	from, to, n uint16
	word, at    uint16
	shift       uint8
	atShift     uint8
	mask        uint64
}

// Packing packs the states of one design.
type Packing struct {
	clients int     // bytes of the used client slots (Fingerprint)
	pieces  []piece // the kept bytes, in State order
	drop    *[stateWords]uint64
	size    int
}

// NewPacking is the packing of design d's states: the used slots, and in
// them the fields d's features set.
func NewPacking(d *Design) Packing { return packing(d, false) }

// WidePacking keeps every field of the used slots: the packing of the
// first version, for a design whose states set a field usedFields does
// not expect (a model bug that Pack reports).
func WidePacking(d *Design) Packing { return packing(d, true) }

func packing(d *Design, wide bool) Packing {
	var keep [stateSize]bool
	mark := func(off, n int) {
		for k := off; k < off+n; k++ {
			keep[k] = true
		}
	}
	cf := clientFields(d, wide)
	for i := 0; i < d.Clients; i++ {
		for _, f := range cf {
			mark(i*clientBytes+f.off, f.n)
		}
	}
	mark(nodesOff, usedNodes(d)*nodeBytes)
	for _, f := range restFields(d, wide) {
		mark(f.off, f.n)
	}
	p := Packing{clients: d.Clients * clientBytes, drop: new([stateWords]uint64)}
	for k := 0; k < stateSize; k++ {
		if !keep[k] {
			p.drop[k/8] |= 0xff << (8 * (k % 8))
			continue
		}
		if n := len(p.pieces); n > 0 && int(p.pieces[n-1].from+p.pieces[n-1].n) == k && k%8 != 0 {
			p.pieces[n-1].n++
		} else {
			p.pieces = append(p.pieces, piece{from: uint16(k), to: uint16(p.size), n: 1})
		}
		p.size++
	}
	for i := range p.pieces {
		pc := &p.pieces[i]
		pc.mask = 1<<(8*pc.n) - 1
		if pc.n == 8 {
			pc.mask = ^uint64(0)
		}
		pc.word = pc.from &^ 7
		pc.shift = uint8(8 * (pc.from - pc.word))
		pc.at = uint16(max(0, min(int(pc.to), p.size-8)))
		pc.atShift = uint8(8 * (pc.to - pc.at))
	}
	return p
}

// field is a field's offset and size.
type field struct{ off, n int }

func fieldOf(off, n uintptr) field { return field{int(off), int(n)} }

// clientFields are the Client fields design d's features set (every one
// when wide). Token, Flags, Phase, Ready and Read are every design's.
func clientFields(d *Design, wide bool) []field {
	var c Client
	fs := []field{fieldOf(unsafe.Offsetof(c.Token), 2), fieldOf(unsafe.Offsetof(c.Flags), 2),
		fieldOf(unsafe.Offsetof(c.Phase), 1), fieldOf(unsafe.Offsetof(c.Ready), 1), fieldOf(unsafe.Offsetof(c.Read), 1)}
	add := func(used bool, off uintptr) {
		if used || wide {
			fs = append(fs, fieldOf(off, 1))
		}
	}
	redlock := d.Lock == LockRedlock
	add(d.Storage == StorageCAS, unsafe.Offsetof(c.Version))
	add(redlock, unsafe.Offsetof(c.Votes))
	add(redlock, unsafe.Offsetof(c.Asked))
	add(redlock || d.Lock == LockZooKeeper || d.Check == CheckValidity || d.AckTimeoutTicks > 0, unsafe.Offsetof(c.Since))
	add(d.RenewTicks > 0 || d.Lock == LockZooKeeper, unsafe.Offsetof(c.Timer))
	add(d.Partitions > 0, unsafe.Offsetof(c.Cut))
	add(d.Partitions > 0, unsafe.Offsetof(c.Group))
	add(d.ClientJumps > 0, unsafe.Offsetof(c.Skew))
	add(d.TimeoutTicks > 0, unsafe.Offsetof(c.Stray))
	add(tracksValues(d), unsafe.Offsetof(c.Job))
	add(tracksValues(d), unsafe.Offsetof(c.Marks))
	return fs
}

// restFields are the fields past the nodes that design d's features set
// (every one when wide): the storage, its replica, the external counter,
// the fault budgets and the clock.
func restFields(d *Design, wide bool) []field {
	var s State
	fs := []field{fieldOf(unsafe.Offsetof(s.Store)+unsafe.Offsetof(s.Store.MaxTok), 2),
		fieldOf(unsafe.Offsetof(s.Store)+unsafe.Offsetof(s.Store.Counter), 1),
		fieldOf(unsafe.Offsetof(s.Store)+unsafe.Offsetof(s.Store.Accepted), 1),
		fieldOf(unsafe.Offsetof(s.Now), 1)}
	add := func(used bool, off, n uintptr) {
		if used || wide {
			fs = append(fs, fieldOf(off, n))
		}
	}
	add(d.Storage == StorageCAS, unsafe.Offsetof(s.Store)+unsafe.Offsetof(s.Store.Version), 1)
	add(false, unsafe.Offsetof(s.Store)+unsafe.Offsetof(s.Store.Reserved), 1)
	add(d.StorageFailovers > 0 || d.StaleReads > 0, unsafe.Offsetof(s.StoreCopy), unsafe.Sizeof(s.StoreCopy))
	add(externalCounter(d), unsafe.Offsetof(s.CounterFence), 2)
	for _, b := range []struct {
		used bool
		off  uintptr
	}{
		{d.Pauses > 0, unsafe.Offsetof(s.PausesUsed)},
		{d.SlowJobs > 0, unsafe.Offsetof(s.SlowUsed)},
		{d.Crashes > 0, unsafe.Offsetof(s.CrashesUsed)},
		{d.Failovers > 0, unsafe.Offsetof(s.Failed)},
		{d.NodeCrashes > 0, unsafe.Offsetof(s.NodeCrashed)},
		{d.ClockJumps > 0, unsafe.Offsetof(s.Jumped)},
		{d.Delays > 0, unsafe.Offsetof(s.Delayed)},
		{d.Partitions > 0, unsafe.Offsetof(s.Partitioned)},
		{d.Losses > 0, unsafe.Offsetof(s.LostReplies)},
		{d.ClientJumps > 0, unsafe.Offsetof(s.ClockSkewed)},
		{d.CounterCrashes > 0, unsafe.Offsetof(s.CounterCrashed)},
	} {
		add(b.used, b.off, 1)
	}
	return fs
}

// Size is the length of a packed state in bytes.
func (p Packing) Size() int { return p.size }

// Pack writes s's kept bytes to dst[:p.Size()] and reports whether every
// byte it left out is zero, that is, whether Unpack gives s back. The
// pieces are gathered into whole words before they are written, so that
// no load waits on a narrower store just before it.
func (p Packing) Pack(s *State, dst []byte) bool {
	b := s.bytes()
	dst = dst[:p.size]
	var acc uint64 // bytes gathered, not yet written
	nb := uint(0)  // bits in acc
	pos := 0
	for _, pc := range p.pieces {
		v := binary.LittleEndian.Uint64(b[pc.word:]) >> pc.shift & pc.mask
		bits := uint(pc.n) * 8
		acc |= v << nb
		if nb+bits < 64 {
			nb += bits
			continue
		}
		binary.LittleEndian.PutUint64(dst[pos:], acc)
		pos += 8
		nb = nb + bits - 64
		acc = v >> (bits - nb) // the piece's bytes that did not fit (none: a shift by 64 is 0)
	}
	for ; pos < p.size; pos++ {
		dst[pos] = byte(acc)
		acc >>= 8
	}
	var or uint64
	for k := range p.drop {
		or |= binary.LittleEndian.Uint64(b[8*k:]) & p.drop[k]
	}
	return or == 0
}

// Unpack sets *s to the state packed in src. Each word of the State is
// assembled from its pieces and written once.
func (p Packing) Unpack(src []byte, s *State) {
	*s = State{}
	b := s.bytes()
	src = src[:p.size]
	if p.size < 8 {
		var in [8]byte
		copy(in[:], src)
		src = in[:]
	}
	var w uint64
	word := -1
	for _, pc := range p.pieces {
		v := binary.LittleEndian.Uint64(src[pc.at:]) >> pc.atShift & pc.mask
		if int(pc.word) != word {
			if word >= 0 {
				binary.LittleEndian.PutUint64(b[word:], w)
			}
			word, w = int(pc.word), 0
		}
		w |= v << pc.shift
	}
	if word >= 0 {
		binary.LittleEndian.PutUint64(b[word:], w)
	}
}

func allZero(b []byte) bool {
	var or uint64
	for len(b) >= 8 {
		or |= binary.LittleEndian.Uint64(b)
		b = b[8:]
	}
	for _, c := range b {
		or |= uint64(c)
	}
	return or == 0
}

// Fingerprint is a 64-bit hash of s's bytes past its unused client slots
// (the used clients, then every node slot and the rest: unused node slots
// are zero or not, they are hashed either way), and whether the unused
// client slots are zero: when they are not, the fingerprint leaves out
// some of the state, and the caller must not trust it. Two states of the
// design have the same fingerprint only by a 64-bit hash collision.
func (p Packing) Fingerprint(s *State) (uint64, bool) {
	b := s.bytes()
	h := hashSeed
	i := 0
	for ; i+16 <= p.clients; i += 16 {
		h = hashBlock(b[i:i+16], h)
	}
	ok := allZero(b[p.clients:nodesOff])
	if i == p.clients { // whole blocks: hash the rest in place
		return hashBytesFrom(b[nodesOff:], h), ok
	}
	// a partial client block: completed from the start of the rest, which
	// is then hashed in place (the same hash as over the two joined)
	var blk [16]byte
	n := copy(blk[:], b[i:p.clients])
	rest := b[nodesOff:]
	k := copy(blk[n:], rest)
	if n+k < 16 {
		return hashBytesFrom(blk[:n+k], h), ok
	}
	return hashBytesFrom(rest[k:], hashBlock(blk[:], h)), ok
}

const hashSeed = uint64(0x9E3779B97F4A7C15)

// hashBytes folds 16 bytes at a time with one 64×64→128-bit multiply (the
// wyhash construction), then finalizes.
func hashBytes(b []byte) uint64 { return hashBytesFrom(b, hashSeed) }

func hashBlock(b []byte, h uint64) uint64 {
	hi, lo := bits.Mul64(binary.LittleEndian.Uint64(b)^0xa0761d6478bd642f, binary.LittleEndian.Uint64(b[8:16])^h)
	return hi ^ lo
}

// hashBytesFrom continues hashBytes from h over b, and finalizes.
func hashBytesFrom(b []byte, h uint64) uint64 {
	for len(b) >= 16 {
		h = hashBlock(b, h)
		b = b[16:]
	}
	var tail [16]byte
	copy(tail[:], b)
	hi, lo := bits.Mul64(binary.LittleEndian.Uint64(tail[:])^0xe7037ed1a0b428db, binary.LittleEndian.Uint64(tail[8:])^h^uint64(len(b)))
	return mix(hi ^ lo)
}
