package model

import (
	"math/rand/v2"
	"testing"
	"unsafe"
)

// Packing.Fingerprint hashes the used client slots and everything after
// the unused ones as if they were one slice, in place: for every client
// count (whole 16-byte blocks or a partial one) it equals hashBytes over
// the two joined.
func TestPackedFingerprintIsTheJoinedHash(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for clients := 1; clients <= MaxClients; clients++ {
		p := Packing{clients: clients * clientBytes}
		for run := 0; run < 50; run++ {
			var s State
			b := s.bytes()
			for k := range b {
				if k < p.clients || k >= nodesOff {
					b[k] = byte(rng.Uint32())
				}
			}
			joined := append(append([]byte{}, b[:p.clients]...), b[nodesOff:]...)
			got, ok := p.Fingerprint(&s)
			if !ok || got != hashBytes(joined) {
				t.Fatalf("%d clients: packed fingerprint %x (ok %v), joined hash %x", clients, got, ok, hashBytes(joined))
			}
		}
	}
}

// sameClient is ==.
func TestSameClient(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for run := 0; run < 2000; run++ {
		var a Client
		ab := (*[clientBytes]byte)(unsafe.Pointer(&a))
		for k := range ab {
			ab[k] = byte(rng.IntN(3))
		}
		b := a
		if rng.IntN(2) == 0 {
			(*[clientBytes]byte)(unsafe.Pointer(&b))[rng.IntN(clientBytes)] ^= 1
		}
		if sameClient(&a, &b) != (a == b) {
			t.Fatalf("sameClient(%+v, %+v) = %v", a, b, !(a == b))
		}
	}
}
