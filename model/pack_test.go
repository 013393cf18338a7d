package model_test

import (
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"lockcheck/catalogue"
	"lockcheck/model"
)

// Every state that random runs of every catalogue design reach packs to
// its design's used bytes and unpacks to itself; the fingerprints (Hash)
// of two states differ when the states do.
func TestPackRoundTripsOverTheCatalogue(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, d := range catalogue.Designs() {
		pk := model.NewPacking(&d)
		buf := make([]byte, pk.Size())
		seen := map[uint64]model.State{}
		for run := 0; run < 20; run++ {
			s := model.Init(&d)
			var acts []model.Action
			for step := 0; step < 200; step++ {
				require.True(t, pk.Pack(&s, buf), "%s: %+v uses an unused slot", d.Name(), s)
				var back model.State
				pk.Unpack(buf, &back)
				require.Equal(t, s, back, d.Name())
				fp := model.Hash(&s)
				if o, ok := seen[fp]; ok {
					require.Equal(t, o, s, "%s: two states, one fingerprint", d.Name())
				}
				seen[fp] = s
				acts = model.Actions(&d, &s, acts)
				if len(acts) == 0 {
					break
				}
				s, _ = model.Step(&d, s, acts[rng.IntN(len(acts))])
			}
		}
	}
}

// A state that uses a slot its design leaves out does not pack.
func TestPackRefusesAnUnusedSlot(t *testing.T) {
	d, err := model.ParseDesign("redis/cad/rw/max-token,clients=2")
	require.NoError(t, err)
	pk := model.NewPacking(&d)
	require.Less(t, pk.Size(), 100)
	buf := make([]byte, pk.Size())
	s := model.Init(&d)
	require.True(t, pk.Pack(&s, buf))
	s.Clients[2].Read = 1
	require.False(t, pk.Pack(&s, buf))
	s = model.Init(&d)
	s.Nodes[1].Exp = 3
	require.False(t, pk.Pack(&s, buf))
	s = model.Init(&d)
	s.Clients[0].Timer = 4 // a field the design's features never set (no renew)
	require.False(t, pk.Pack(&s, buf))
	s = model.Init(&d)
	s.Used[model.FaultCounterCrash] = 1 // a budget of a fault the design does not have
	require.False(t, pk.Pack(&s, buf))
	wide := model.WidePacking(&d) // keeps every field of the used slots
	require.Greater(t, wide.Size(), pk.Size())
	wbuf := make([]byte, wide.Size())
	require.True(t, wide.Pack(&s, wbuf))
	var back model.State
	wide.Unpack(wbuf, &back)
	require.Equal(t, s, back)
}

// The hash of every state that random runs of every catalogue design reach
// differs from those of the other states reached, and changes when any one
// bit of the state does.
func TestHashOverTheCatalogue(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, d := range catalogue.Designs() {
		seen := map[uint64]model.State{}
		for run := 0; run < 10; run++ {
			s := model.Init(&d)
			var acts []model.Action
			for step := 0; step < 100; step++ {
				h := model.Hash(&s)
				if o, ok := seen[h]; ok {
					require.Equal(t, o, s, "%s: two states, one hash", d.Name())
				}
				seen[h] = s
				if step == 0 && run == 0 {
					b := unsafe.Slice((*byte)(unsafe.Pointer(&s)), unsafe.Sizeof(s))
					for k := range b {
						for bit := 0; bit < 8; bit++ {
							b[k] ^= 1 << bit
							require.NotEqual(t, h, model.Hash(&s), "%s: flipping bit %d of byte %d keeps the hash", d.Name(), bit, k)
							b[k] ^= 1 << bit
						}
					}
				}
				acts = model.Actions(&d, &s, acts)
				if len(acts) == 0 {
					break
				}
				s, _ = model.Step(&d, s, acts[rng.IntN(len(acts))])
			}
		}
	}
}

// The search's forms of Pack and Unpack, with 8 bytes of room past the
// packed state (in place), give what the scratch forms give, and PackHash
// (the fingerprint without symmetry) packs the same bytes, refuses the
// same states, and gives two states of a design the same hash only when
// they are equal, on random runs of every catalogue design.
func TestPackInPlaceAndPackHash(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, d := range catalogue.Designs() {
		pk := model.NewPacking(&d)
		want := make([]byte, pk.Size())
		room := make([]byte, pk.Size()+8)
		hashed := make([]byte, pk.Size()+8)
		seen := map[uint64]model.State{}
		for run := 0; run < 10; run++ {
			s := model.Init(&d)
			var acts []model.Action
			for step := 0; step < 200; step++ {
				ok := pk.Pack(&s, want)
				require.Equal(t, ok, pk.Pack(&s, room), d.Name())
				h, hok := pk.PackHash(&s, hashed)
				require.Equal(t, ok, hok, d.Name())
				require.Equal(t, want, room[:pk.Size()], "%s: Pack in place", d.Name())
				require.Equal(t, want, hashed[:pk.Size()], "%s: PackHash's bytes", d.Name())
				var back model.State
				pk.Unpack(room, &back)
				require.Equal(t, s, back, "%s: Unpack in place", d.Name())
				if o, dup := seen[h]; dup {
					require.Equal(t, o, s, "%s: two states, one PackHash", d.Name())
				}
				seen[h] = s
				acts = model.Actions(&d, &s, acts)
				if len(acts) == 0 {
					break
				}
				s, _ = model.Step(&d, s, acts[rng.IntN(len(acts))])
			}
		}
		bad := model.Init(&d)
		bad.Clients[model.MaxClients-1].Read = 1 // a slot no design uses
		_, ok := pk.PackHash(&bad, hashed)
		require.False(t, ok, "%s: PackHash accepts a state with an unused slot set", d.Name())
	}
}
