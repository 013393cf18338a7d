package model

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// reachable collects states from random walks of a design, for benchmarks.
func reachable(b *testing.B, name string, n int) []State {
	d, err := ParseDesign(name)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	var out []State
	for len(out) < n {
		randomWalk(&d, rng, func(s State, a Action, next State, ev Event) { out = append(out, next) })
	}
	return out[:n]
}

var sink uint64

// fingerprintMurmur is the first fingerprint (a MurmurHash3 finalizer per
// 8 bytes), kept as the benchmark's baseline.
func (s *State) fingerprintMurmur() uint64 {
	b := s.bytes()
	h := uint64(0x9E3779B97F4A7C15)
	for len(b) >= 8 {
		h = mix(h ^ binary.LittleEndian.Uint64(b))
		b = b[8:]
	}
	var tail [8]byte
	copy(tail[:], b)
	h = mix(h ^ binary.LittleEndian.Uint64(tail[:]) ^ uint64(len(b)))
	return mix(h)
}

// go test ./model -run '^$' -bench Fingerprint -count 10 | benchstat -col /hash -
func BenchmarkFingerprint(b *testing.B) {
	states := reachable(b, "redis/cad/rw/max-token,clock=free,horizon=41", 4096)
	b.Run("hash=murmur", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			sink += states[i&4095].fingerprintMurmur()
		}
	})
	b.Run("hash=wymul", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			sink += states[i&4095].Fingerprint()
		}
	})
}

// The fingerprint spreads: no two distinct states of a sample share one,
// and flipping any one byte changes it.
func TestFingerprintSpreads(t *testing.T) {
	d, err := ParseDesign("redlock/cad/none/plain,node-crashes=1,jumps=1")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[uint64]State{}
	rng := rand.New(rand.NewPCG(9, 10))
	for w := 0; w < 200; w++ {
		randomWalk(&d, rng, func(s State, a Action, next State, ev Event) {
			f := next.Fingerprint()
			if prev, ok := seen[f]; ok && prev != next {
				t.Fatalf("two states share fingerprint %x", f)
			}
			seen[f] = next
			for k := 0; k < stateSize; k++ {
				m := next
				m.bytes()[k] ^= 1
				if m.Fingerprint() == f {
					t.Fatalf("flipping byte %d keeps the fingerprint", k)
				}
			}
		})
	}
}

// BenchmarkSuccessors is the model's share of the search's work on one
// state: its actions, each successor, and every property's Bad on each
// (the search asks the live ones; here all of them), on states of a random
// walk. It times the per-step model code apart from the engine's packing
// and hashing, which the explore benchmarks include:
// go test ./model -run '^$' -bench Successors -count 10 | benchstat -
func BenchmarkSuccessors(b *testing.B) {
	for _, name := range []string{
		"redis/cad/rw/max-token,clock=free,horizon=41", // the SPIN design
		"redlock/cad/none/plain",
		"redlock/cad/none/plain,clients=4",
	} {
		d, err := ParseDesign(name)
		if err != nil {
			b.Fatal(err)
		}
		states := reachable(b, name, 4096)
		props := PropertiesFor(&d)
		b.Run("design="+name, func(b *testing.B) {
			var buf []Action
			var ns State
			var ev Event
			bad := 0
			for i := 0; i < b.N; i++ {
				s := &states[i&4095]
				buf = Actions(&d, s, buf)
				for _, a := range buf {
					ns = *s
					StepTo(&d, &ns, a, &ev)
					for p := range props {
						if props[p].Bad(&d, &ns, &ev) {
							bad++
						}
					}
				}
			}
			sink += uint64(bad)
		})
	}
}
