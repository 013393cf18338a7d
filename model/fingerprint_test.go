package model

import (
	"math/rand/v2"
	"testing"
	"unsafe"
)

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
