package model

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// symhash.go: a fingerprint of a state's symmetry class without building
// its canonical copy. Two states are in the same class when a renaming of
// the clients maps one to the other (Canonical): the same multiset of
// (client, nodes whose key it holds) pairs, and the same everything else
// once the key owners are left out (each node's owner is the one client
// whose pair names that node). So the fingerprint hashes each client with
// the mask of the nodes it owns, adds the hashes up (a sum does not depend
// on the order), and combines the sum with a hash of the rest of the state
// with every Owner byte zeroed. Canonical sorts and copies the state twice;
// this reads it once.

// nodeOwnerOff is the offset of Owner inside a Node.
const nodeOwnerOff = int(unsafe.Offsetof(Node{}.Owner))

// restBytes is the length of the state from its first node on.
const restBytes = stateSize - nodesOff

// SymmetricFingerprint is a 64-bit hash of s's class under client
// renaming: states with the same Canonical form have the same value, and
// states with different ones differ but for a 64-bit hash collision. Like
// Fingerprint it reports whether the unused client slots are zero. It is
// for designs whose only symmetry is the clients' (OnlyClientSymmetry).
func (p Packing) SymmetricFingerprint(s *State) (uint64, bool) {
	b := s.bytes()
	ok := allZero(b[p.clients:nodesOff])
	var owns [MaxClients + 1]uint64 // owns[o]: nodes whose Owner is o (o = client+1); owns[0] is unused
	var rest [restBytes]byte
	copy(rest[:], b[nodesOff:])
	for k := 0; k < MaxNodes; k++ {
		at := k*nodeBytes + nodeOwnerOff
		o := rest[at]
		rest[at] = 0
		if int(o) <= MaxClients {
			owns[o] |= 1 << k
		} else {
			ok = false // not a client: the model never writes one
		}
	}
	var sum uint64
	n := p.clients / clientBytes
	for i := 0; i < n; i++ {
		c := b[i*clientBytes : (i+1)*clientBytes]
		sum += clientHash(c, owns[i+1])
	}
	h := hashBytesFrom(rest[:], hashSeed)
	hi, lo := bits.Mul64(h^0x8bb84b93962eacc9, sum^0x4b33a62ed433d4a3)
	return mix(hi ^ lo), ok
}

// OnlyClientSymmetry reports whether Canonical renames only the clients of
// design d, so that SymmetricFingerprint is the fingerprint of its
// Canonical form. It does for every design: Redlock's nodes are not
// interchangeable, since its clients ask them in a fixed order (node 1
// first, lock_redlock.go). A symmetry over lock nodes would need asks in
// any order, which makes Redlock's space far larger than symmetry wins
// back (3 clients, 5 nodes: more than 10 million classes against 551,509
// states, as split votes can repeat every tick); a design with one would
// be kept on Canonical here.
func OnlyClientSymmetry(d *Design) bool { return true }

// The client's last bytes and its owner mask share one word.
const _ = uint(64 - 8*(clientBytes-16) - MaxNodes) // a compile error if they do not fit
const _ = uint(clientBytes - 16)                   // … or if a client is shorter than two words

// clientHash hashes one client's bytes and the mask of the nodes it owns.
func clientHash(c []byte, owns uint64) uint64 {
	_ = c[clientBytes-1]
	w0 := binary.LittleEndian.Uint64(c)
	w1 := binary.LittleEndian.Uint64(c[8:])
	var w2 uint64
	for k := 16; k < clientBytes; k++ {
		w2 |= uint64(c[k]) << (8 * (k - 16))
	}
	w2 |= owns << (8 * (clientBytes - 16))
	hi, lo := bits.Mul64(w0^0xa0761d6478bd642f, w1^0xe7037ed1a0b428db)
	hi, lo = bits.Mul64(hi^lo^0x589965cc75374cc3, w2^0x1d8e4e27c47d124f)
	return mix(hi ^ lo)
}
