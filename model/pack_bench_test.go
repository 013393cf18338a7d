package model

import "testing"

func benchStates(b *testing.B) (*Design, []State) {
	d, err := ParseDesign("redis/cad/rw/max-token,clock=free,horizon=41")
	if err != nil {
		b.Fatal(err)
	}
	s := Init(&d)
	var out []State
	var acts []Action
	for len(out) < 64 {
		out = append(out, s)
		acts = Actions(&d, &s, acts)
		if len(acts) == 0 {
			s = Init(&d)
			continue
		}
		s, _ = Step(&d, s, acts[len(out)%len(acts)])
	}
	return &d, out
}

func BenchmarkFingerprintFull(b *testing.B) {
	_, ss := benchStates(b)
	var sink uint64
	for i := 0; i < b.N; i++ {
		sink += ss[i&63].Fingerprint()
	}
	_ = sink
}

// BenchmarkPack and BenchmarkUnpack move the packed state in place (the
// search's case: 8 bytes of room past it) and through a scratch copy.
func BenchmarkPack(b *testing.B) {
	d, ss := benchStates(b)
	pk := NewPacking(d)
	for _, room := range []int{8, 0} {
		b.Run(roomName(room), func(b *testing.B) {
			buf := make([]byte, pk.Size()+room)
			for i := 0; i < b.N; i++ {
				pk.Pack(&ss[i&63], buf)
			}
		})
	}
}

// BenchmarkPackHash is the search's work on a successor without symmetry,
// against Hash and Pack apart.
func BenchmarkPackHash(b *testing.B) {
	d, ss := benchStates(b)
	pk := NewPacking(d)
	buf := make([]byte, pk.Size()+8)
	var sink uint64
	b.Run("fused", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			h, _ := pk.PackHash(&ss[i&63], buf)
			sink += h
		}
	})
	b.Run("hash+pack", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			sink += Hash(&ss[i&63])
			pk.Pack(&ss[i&63], buf)
		}
	})
	_ = sink
}

func BenchmarkUnpack(b *testing.B) {
	d, ss := benchStates(b)
	pk := NewPacking(d)
	for _, room := range []int{8, 0} {
		b.Run(roomName(room), func(b *testing.B) {
			bufs := make([][]byte, 64)
			for k := range bufs {
				bufs[k] = make([]byte, pk.Size()+room)
				pk.Pack(&ss[k], bufs[k])
			}
			var s State
			for i := 0; i < b.N; i++ {
				pk.Unpack(bufs[i&63], &s)
			}
		})
	}
}

func roomName(room int) string {
	if room > 0 {
		return "in-place"
	}
	return "scratch"
}
