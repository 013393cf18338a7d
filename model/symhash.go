package model

import (
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
// states with different ones differ but for a 64-bit hash collision. It
// reads the used client slots and everything from the first node on, in
// place; it does not look at the unused client slots (Pack checks that
// they are zero), and reports false if a key's owner is not a client.
// Clients are every design's only symmetry: Redlock's nodes are not
// interchangeable, since its clients ask them in a fixed order (node 1
// first, lock_redlock.go). A symmetry over lock nodes would need asks in
// any order, which makes Redlock's space far larger than symmetry wins
// back (3 clients, 5 nodes: more than 10 million classes against 551,509
// states, as split votes can repeat every tick).
func (p Packing) SymmetricFingerprint(s *State) (uint64, bool) {
	b := unsafe.Pointer(s)
	var owns [MaxClients + 1]uint64 // owns[o]: nodes whose Owner is o (o = client+1); owns[0] is unused
	ok := true
	for k := 0; k < MaxNodes; k++ {
		if o := s.Nodes[k].Owner; int(o) <= MaxClients {
			owns[o] |= 1 << k
		} else {
			ok = false // not a client: the model never writes one
		}
	}
	var sum uint64
	for i := 0; i < p.clients/clientBytes; i++ {
		at := uintptr(i * clientBytes)
		sum += clientHash(load64(b, at), load64(b, at+8), uint64(s.Clients[i].Job)|uint64(s.Clients[i].Marks)<<8|owns[i+1]<<16)
	}
	// the rest, 7 words from the first node on, with the owners left out,
	// in two chains
	const o = uintptr(nodesOff)
	m := &restMask
	h1 := hashWords(load64(b, o)&m[0], load64(b, o+8)&m[1], hashSeed)
	h2 := hashWords(load64(b, o+16)&m[2], load64(b, o+24)&m[3], hashSeed2)
	h1 = hashWords(load64(b, o+32)&m[4], load64(b, o+40)&m[5], h1)
	h2 = hashWords(load64(b, o+48)&m[6], 0, h2)
	return mix(h1 ^ bits.RotateLeft64(h2, 32) + sum), ok
}

// restMask masks the Owner bytes out of the 7 words from the first node
// on (SymmetricFingerprint).
var restMask = func() (m [restBytes / 8]uint64) {
	for k := range m {
		m[k] = ^uint64(0)
	}
	for n := 0; n < MaxNodes; n++ {
		at := n*nodeBytes + nodeOwnerOff
		m[at/8] &^= 0xff << (8 * (at % 8))
	}
	return m
}()

// The rest is 7 whole words (SymmetricFingerprint reads it so), and a
// client's last two bytes are Job and Marks.
const _ = uint(restBytes - 56)
const _ = uint(56 - restBytes)
const _ = uint(clientBytes - 18)
const _ = uint(18 - clientBytes)
const _ = uint(unsafe.Offsetof(Client{}.Job) - 16)
const _ = uint(16 - unsafe.Offsetof(Client{}.Job))
const _ = uint(unsafe.Offsetof(Client{}.Marks) - 17)
const _ = uint(17 - unsafe.Offsetof(Client{}.Marks))

// clientHash hashes one client: its first 16 bytes in w0 and w1, its last
// two and the mask of the nodes it owns in w2.
func clientHash(w0, w1, w2 uint64) uint64 {
	hi, lo := bits.Mul64(w0^0xa0761d6478bd642f, w1^0xe7037ed1a0b428db)
	hi, lo = bits.Mul64(hi^lo^0x589965cc75374cc3, w2^0x1d8e4e27c47d124f)
	return mix(hi ^ lo)
}
