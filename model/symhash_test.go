package model

import (
	"math/rand/v2"
	"testing"
)

// symWalk collects states of design name reached by random walks.
func symWalk(t *testing.T, name string, n int, rng *rand.Rand) (*Design, []State) {
	t.Helper()
	d, err := ParseDesign(name)
	if err != nil {
		t.Fatal(err)
	}
	var out []State
	var acts []Action
	s := Init(&d)
	for len(out) < n {
		out = append(out, s)
		acts = Actions(&d, &s, acts)
		if len(acts) == 0 {
			s = Init(&d)
			continue
		}
		s, _ = Step(&d, s, acts[rng.IntN(len(acts))])
	}
	return &d, out
}

// renamed is s with its clients renamed by perm (client i becomes perm[i]).
func renamed(d *Design, s State, perm []int) State {
	out := s
	for i := 0; i < d.Clients; i++ {
		out.Clients[perm[i]] = s.Clients[i]
	}
	for k := range out.Nodes {
		if o := s.Nodes[k].Owner; o != 0 {
			out.Nodes[k].Owner = uint8(perm[o-1] + 1)
		}
	}
	return out
}

// SymmetricFingerprint is a fingerprint of Canonical: on states reached by
// random walks over designs with client symmetry, two states have the same
// symmetric fingerprint exactly when they have the same canonical form,
// and renaming the clients does not change it.
func TestSymmetricFingerprintIsCanonicalsFingerprint(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, name := range []string{
		"redis/cad/rw/max-token,clock=free,horizon=41,clients=5",
		"demo2", "demo6", "replica/cad/rw/max-token,failovers=1",
		"redis/cad/none/plain,persist=1,fsync=1,node-crashes=1,acquire=incr-before",
		"zookeeper/cad/none/plain", "etcd/cad/rw/max-token",
		"redis/cad/none/plain,jobs=2,restarts=1,clients=3",
		"redlock/cad/none/plain,clients=4", "redlock/get-del/none/cas,quorum=all,node-crashes=1,persist=1",
		"redlock/cad/none/plain,partition=node,partitions=2,pauses=0,jumps=1,jump=9,renew=3",
		"etcd-mutex/del/none/plain,readers=1,session-check=none,pause-at=acquire",
		"etcd-mutex/del/write/max-write,readers=2,clients=4,crashes=1",
	} {
		d, states := symWalk(t, name, 3000, rng)
		pk := NewPacking(d)
		byFP := map[uint64]State{}
		perm := make([]int, d.Clients)
		for _, s := range states {
			fp, ok := pk.SymmetricFingerprint(&s)
			if !ok {
				t.Fatalf("%s: a reached state uses an unused client slot", name)
			}
			c := Canonical(d, s)
			if prev, seen := byFP[fp]; seen && Canonical(d, prev) != c {
				t.Fatalf("%s: two classes share fingerprint %x:\n%+v\n%+v", name, fp, prev, s)
			}
			byFP[fp] = s
			for i := range perm {
				perm[i] = i
			}
			rng.Shuffle(len(perm), func(a, b int) { perm[a], perm[b] = perm[b], perm[a] })
			r := renamed(d, s, perm)
			if Canonical(d, r) != c {
				t.Fatalf("%s: renaming changed the canonical form", name)
			}
			if fr, _ := pk.SymmetricFingerprint(&r); fr != fp {
				t.Fatalf("%s: renaming %v changed the fingerprint", name, perm)
			}
		}
		classes := map[State]bool{}
		for _, s := range states {
			classes[Canonical(d, s)] = true
		}
		if len(classes) != len(byFP) {
			t.Fatalf("%s: %d canonical forms, %d symmetric fingerprints", name, len(classes), len(byFP))
		}
	}
}

// Which client owns a key is part of the class: A holding the key while B
// waits differs from B holding it while A waits, although the clients'
// own fields are the same multiset.
func TestSymmetricFingerprintSeesTheOwner(t *testing.T) {
	d, err := ParseDesign("redis/cad/none/plain")
	if err != nil {
		t.Fatal(err)
	}
	pk := NewPacking(&d)
	s := Init(&d)
	s.Clients[0].Phase, s.Clients[0].Flags = PhaseRead, FlagBelieves|FlagStarted
	s.Clients[1].Phase, s.Clients[1].Flags = PhaseRead, FlagBelieves|FlagStarted
	a, b := s, s
	a.Nodes[0].Owner, b.Nodes[0].Owner = 1, 0
	b.Nodes[0].Owner = 3
	fa, _ := pk.SymmetricFingerprint(&a)
	fb, _ := pk.SymmetricFingerprint(&b)
	if Canonical(&d, a) == Canonical(&d, b) || fa == fb {
		t.Fatalf("A owning the key and C owning it must differ (fingerprints %x, %x)", fa, fb)
	}
	c := a
	c.Nodes[0].Owner = 2 // B owns it: A and B are alike, so this is a renaming of a
	if fc, _ := pk.SymmetricFingerprint(&c); fc != fa {
		t.Fatalf("A or B owning the key, A and B alike: same class, fingerprints %x, %x", fa, fc)
	}
	bad := a
	bad.Nodes[0].Owner = MaxClients + 1
	if _, ok := pk.SymmetricFingerprint(&bad); ok {
		t.Fatal("an owner past the clients must be reported")
	}
	unused := a                        // an unused client slot that is not zero: the fingerprint
	unused.Clients[d.Clients].Read = 1 // does not read it, Pack refuses it
	if fu, _ := pk.SymmetricFingerprint(&unused); fu != fa {
		t.Fatal("the fingerprint reads the unused client slots")
	}
	if pk.Pack(&unused, make([]byte, pk.Size())) {
		t.Fatal("Pack must refuse an unused client slot that is not zero")
	}
}
