package model

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// pack.go: a state packed to the bytes its design uses, for the search's
// frontier and fingerprints. State reserves MaxClients client slots and
// MaxNodes node slots; a design uses only its first d.Clients clients and
// its lock service's first lockNodes(d) nodes (and, with fsync=N, the next
// as the disk image), and leaves the others zero.
// The packed form is those slots followed by everything after the nodes
// (storage, budgets, clock), in State's own byte layout: 86 bytes instead
// of 200 for three clients on one Redis node. Its Fingerprint hashes the
// used client slots and everything after them, without a copy of the
// state.

const (
	clientBytes = int(unsafe.Sizeof(Client{}))
	nodeBytes   = int(unsafe.Sizeof(Node{}))
	nodesOff    = int(unsafe.Offsetof(State{}.Nodes))
	restOff     = nodesOff + MaxNodes*nodeBytes
)

// Packing packs the states of one design.
type Packing struct {
	clients int // bytes of the used client slots
	nodes   int // bytes of the used node slots
	size    int
}

// NewPacking is the packing of design d's states.
func NewPacking(d *Design) Packing {
	c, n := d.Clients*clientBytes, usedNodes(d)*nodeBytes
	return Packing{clients: c, nodes: n, size: c + n + stateSize - restOff}
}

// Size is the length of a packed state in bytes.
func (p Packing) Size() int { return p.size }

// Pack writes s's used bytes to dst[:p.Size()] and reports whether every
// byte it left out (the unused client and node slots) is zero, that is,
// whether Unpack gives s back.
func (p Packing) Pack(s *State, dst []byte) bool {
	b := s.bytes()
	dst = dst[:p.size]
	copy(dst, b[:p.clients])
	copy(dst[p.clients:], b[nodesOff:nodesOff+p.nodes])
	copy(dst[p.clients+p.nodes:], b[restOff:])
	return allZero(b[p.clients:nodesOff]) && allZero(b[nodesOff+p.nodes:restOff])
}

// Unpack sets *s to the state packed in src.
func (p Packing) Unpack(src []byte, s *State) {
	b := s.bytes()
	src = src[:p.size]
	copy(b, src[:p.clients])
	clear(b[p.clients:nodesOff])
	copy(b[nodesOff:], src[p.clients:p.clients+p.nodes])
	clear(b[nodesOff+p.nodes : restOff])
	copy(b[restOff:], src[p.clients+p.nodes:])
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
