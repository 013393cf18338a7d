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

func BenchmarkUnpack(b *testing.B) {
	d, ss := benchStates(b)
	pk := NewPacking(d)
	buf := make([]byte, pk.Size())
	pk.Pack(&ss[5], buf)
	var s State
	for i := 0; i < b.N; i++ {
		pk.Unpack(buf, &s)
	}
}
