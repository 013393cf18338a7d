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
// storage and budgets only the fields its features set (clientFields,
// restFields). The others stay zero. The packed form is the kept bytes in
// State's own order: 34 bytes instead of 200 for three clients on one
// Redis node with one pause (the SPIN design). Pack checks that every byte
// it leaves out is zero, so that a field the rules below forget is an
// error the search sees (it then searches again with WidePacking), never
// a state silently changed.
// The search's fingerprints: without symmetry PackHash, a hash of the
// packed pieces taken while packing; with it SymmetricFingerprint
// (symhash.go), which reads the state in place.

const (
	clientBytes = int(unsafe.Sizeof(Client{}))
	nodeBytes   = int(unsafe.Sizeof(Node{}))
	nodesOff    = int(unsafe.Offsetof(State{}.Nodes))
	restOff     = nodesOff + MaxNodes*nodeBytes
	stateWords  = stateSize / 8
)

// State is whole 8-byte words (Pack's zero check reads it by words).
const _ = uint(stateWords*8 - stateSize)

// ... and a multiple of 5 of them (Pack's zero check takes 5 at a time).
const _ = -uint(stateWords % 5)

// piece is a run of at most 8 kept bytes: State offset from, packed
// offset to, length n, and mask the mask of n bytes. Pack and Unpack move
// it as one unaligned 8-byte word: from the State at lo (from, or the
// State's last 8 bytes when from is within 8 bytes of its end) shifted by
// shift bits, to the packed state at to (in a scratch copy with 8 bytes of
// room past the end).
type piece struct {
	from, to, n uint16
	lo          uint16
	shift       uint8
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
		if n := len(p.pieces); n > 0 && int(p.pieces[n-1].from+p.pieces[n-1].n) == k && p.pieces[n-1].n < 8 {
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
		pc.lo = min(pc.from, uint16(stateSize-8))
		pc.shift = uint8(8 * (pc.from - pc.lo))
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
	lease := d.Lock == LockLease
	// pooledSession: the backend of its grant; bypass (fairness.go): the
	// waiting order and the bypass count
	bypass := measuresBypass(d)
	add(redlock || lease || pooledSession(d) || bypass, unsafe.Offsetof(c.Votes))
	add(redlock || lease || bypass, unsafe.Offsetof(c.Asked))
	add(redlock || lease || sessionQueue(d) || d.Check != CheckTrust || d.AckTimeoutTicks > 0, unsafe.Offsetof(c.Since))
	add(d.RenewTicks > 0 || sessionQueue(d), unsafe.Offsetof(c.Timer))
	add(d.Partitions > 0, unsafe.Offsetof(c.Cut))
	add(d.Partitions > 0, unsafe.Offsetof(c.Group))
	add(d.ClientJumps > 0, unsafe.Offsetof(c.Skew))
	add(d.TimeoutTicks > 0, unsafe.Offsetof(c.Stray))
	add(tracksValues(d), unsafe.Offsetof(c.Job))
	add(tracksValues(d) || lease || d.Readers > 0 || d.Ack == AckWait, unsafe.Offsetof(c.Marks)) // ack=wait: WAIT's answer (MarkAcks)
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
	add(externalCounter(d) || d.Lock == LockLease, unsafe.Offsetof(s.CounterFence), 2) // lease: leaseTransitions
	for f := Fault(0); f < numUsed; f++ {
		add(f.Budget(d) > 0, unsafe.Offsetof(s.Used)+uintptr(f), 1)
	}
	return fs
}

// Size is the length of a packed state in bytes.
func (p Packing) Size() int { return p.size }

// Pack writes s's kept bytes to dst[:p.Size()] and reports whether every
// byte it left out is zero, that is, whether Unpack gives s back. Each
// piece is one 8-byte load and one 8-byte store (a piece's store may run
// past its bytes: the next piece's store, further on, writes them again).
// Given 8 bytes of room past the packed state (len(dst) ≥ p.Size()+8),
// the pieces are stored in dst itself, and the last one may zero up to 7
// bytes of that room; otherwise they go to a scratch copy, then to dst.
// (A scratch copy costs more than its copy: the copy's wide loads span
// several of the pieces' narrow stores, which the CPU cannot forward.)
func (p Packing) Pack(s *State, dst []byte) bool {
	sp := unsafe.Pointer(s)
	var out [stateSize + 8]byte
	op := unsafe.Pointer(&out)
	room := len(dst) >= p.size+8
	if room {
		op = unsafe.Pointer(unsafe.SliceData(dst))
	}
	for _, pc := range p.pieces {
		store64(op, uintptr(pc.to), load64(sp, uintptr(pc.lo))>>pc.shift&pc.mask)
	}
	if !room {
		copy(dst[:p.size], out[:p.size])
	}
	return p.dropZero(sp)
}

// PackHash is Pack with a hash of the packed state: the search's
// fingerprint without symmetry. It hashes the pieces' values as Pack
// moves them (each determines its bytes of the packed state, and their
// sequence the whole packed state), so that a state is read once; two
// states that Pack accepts have the same hash only if they are equal or
// by a 64-bit hash collision. A state that Pack refuses (ok false) may
// share its hash with another: the search then starts again with
// WidePacking. Like Pack it needs dst to be p.Size()+8 bytes or more.
func (p Packing) PackHash(s *State, dst []byte) (h uint64, ok bool) {
	if len(dst) < p.size+8 {
		panic("model: PackHash needs 8 bytes of room past the packed state")
	}
	sp, op := unsafe.Pointer(s), unsafe.Pointer(unsafe.SliceData(dst))
	piece := func(pc *piece) uint64 {
		v := load64(sp, uintptr(pc.lo)) >> pc.shift & pc.mask
		store64(op, uintptr(pc.to), v)
		return v
	}
	// two chains of two pieces a fold, which the CPU overlaps
	h1, h2 := hashSeed, hashSeed2
	pcs := p.pieces
	k := 0
	for ; k+4 <= len(pcs); k += 4 {
		v0, v1 := piece(&pcs[k]), piece(&pcs[k+1])
		v2, v3 := piece(&pcs[k+2]), piece(&pcs[k+3])
		h1 = hashWords(v0, v1, h1)
		h2 = hashWords(v2, v3, h2)
	}
	for ; k < len(pcs); k += 2 {
		v0, v1 := piece(&pcs[k]), uint64(0)
		if k+1 < len(pcs) {
			v1 = piece(&pcs[k+1])
		}
		h1 = hashWords(v0, v1, h1)
		h1, h2 = h2, h1
	}
	return mix(h1 ^ bits.RotateLeft64(h2, 32)), p.dropZero(sp)
}

// dropZero reports whether every byte the packing leaves out of the State
// at sp is zero.
func (p Packing) dropZero(sp unsafe.Pointer) bool {
	var or uint64
	d := p.drop
	for k := 0; k+5 <= stateWords; k += 5 { // stateWords is 25
		o := uintptr(8 * k)
		or |= load64(sp, o)&d[k] | load64(sp, o+8)&d[k+1] | load64(sp, o+16)&d[k+2] |
			load64(sp, o+24)&d[k+3] | load64(sp, o+32)&d[k+4]
	}
	return or == 0
}

// Unpack sets *s to the state packed in src[:p.Size()]: the State is
// cleared, then each piece is one 8-byte load and one 8-byte store into
// the State, in State order (a store that runs past its piece writes
// zeros that a later piece overwrites; a piece in the State's last 8
// bytes is merged into them). Given 8 bytes of room past the packed state
// (len(src) ≥ p.Size()+8; their value does not matter) the pieces are
// read from src in place; otherwise from a scratch copy of it.
func (p Packing) Unpack(src []byte, s *State) {
	*s = State{}
	var ip unsafe.Pointer
	if len(src) >= p.size+8 {
		ip = unsafe.Pointer(unsafe.SliceData(src))
	} else {
		var in [stateSize + 8]byte
		copy(in[:], src[:p.size])
		ip = unsafe.Pointer(&in)
	}
	sp := unsafe.Pointer(s)
	for _, pc := range p.pieces {
		v := load64(ip, uintptr(pc.to)) & pc.mask
		if pc.lo == pc.from {
			store64(sp, uintptr(pc.from), v)
		} else {
			store64(sp, uintptr(pc.lo), load64(sp, uintptr(pc.lo))|v<<pc.shift)
		}
	}
}

// Hash is a 64-bit hash of all of s's bytes (State.Fingerprint; the
// search hashes packed states instead, PackHash). Two states have the
// same hash only by a 64-bit hash collision. It covers the unused slots
// and the fields that a packing leaves out too.
//
// It folds the State's 16-byte blocks with one 64×64→128-bit multiply
// each (the wyhash construction, hashWords), in four independent chains
// that the CPU overlaps, reading the state in place; a last partial block
// is the State's last 16 bytes.
func Hash(s *State) uint64 {
	const size = uintptr(stateSize)
	b := unsafe.Pointer(s)
	h1, h2, h3, h4 := hashSeed, hashSeed2, hashSeed3, hashSeed4
	o := uintptr(0)
	for ; o+64 <= size; o += 64 {
		h1 = hashWords(load64(b, o), load64(b, o+8), h1)
		h2 = hashWords(load64(b, o+16), load64(b, o+24), h2)
		h3 = hashWords(load64(b, o+32), load64(b, o+40), h3)
		h4 = hashWords(load64(b, o+48), load64(b, o+56), h4)
	}
	for ; o+16 <= size; o += 16 {
		h1 = hashWords(load64(b, o), load64(b, o+8), h1)
		h1, h2, h3, h4 = h2, h3, h4, h1
	}
	if o < size {
		h4 = hashWords(load64(b, size-16), load64(b, size-8), h4)
	}
	return mix(h1 ^ bits.RotateLeft64(h2, 16) ^ bits.RotateLeft64(h3, 32) ^ bits.RotateLeft64(h4, 48))
}

// Hash's chains start from hashSeed and these.
const (
	hashSeed2 = uint64(0xD6E8FEB86659FD93)
	hashSeed3 = uint64(0xC2B2AE3D27D4EB4F)
	hashSeed4 = uint64(0x165667B19E3779F9)
)

// load64 reads the 8 bytes at offset o of b as a little-endian word (the
// offsets are NewPacking's: the 8 bytes are inside b's object); on amd64
// and arm64 one unaligned load.
func load64(b unsafe.Pointer, o uintptr) uint64 {
	return binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(b, o))[:])
}

// store64 writes v as the little-endian 8 bytes at offset o of b.
func store64(b unsafe.Pointer, o uintptr, v uint64) {
	binary.LittleEndian.PutUint64((*[8]byte)(unsafe.Add(b, o))[:], v)
}

// hashWords folds the 16 bytes a, b into h.
func hashWords(a, b, h uint64) uint64 {
	hi, lo := bits.Mul64(a^0xa0761d6478bd642f, b^h)
	return hi ^ lo
}

const hashSeed = uint64(0x9E3779B97F4A7C15)
