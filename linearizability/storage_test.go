package linearizability

import (
	"math/rand/v2"
	"strings"
	"testing"

	"lockcheck/model"
)

// The storage of every demo keeps its promise; where the lock had already
// passed on, the storage and the lock disagree (Demo 2, 4, 5: a late write
// lands), and where fencing works they agree (Demo 3, 6: the late write is
// refused, as the lock would have it).
func TestStorageDemos(t *testing.T) {
	cases := []struct {
		demo string
		want string
	}{
		{"1", "storage: keeps its promise as plain storage with fence=none (3 reads, 3 writes, 0 rejected); lock and storage agree"},
		{"2", "storage: keeps its promise as plain storage with fence=none (3 reads, 3 writes, 0 rejected); lock and storage disagree 1 time: t=15 A's write of 1 accepted while the key is C's"},
		{"3", "storage: keeps its promise as max-token storage with fence=write (3 reads, 3 writes, 1 rejected); lock and storage agree"},
		{"4", "storage: keeps its promise as plain storage with fence=none (3 reads, 3 writes, 0 rejected); lock and storage disagree 2 times: t=13 A's write of 1 accepted while the key is B's (and 1 more)"},
		{"5", "storage: keeps its promise as plain storage with fence=none (3 reads, 3 writes, 0 rejected); lock and storage disagree 1 time: t=13 A's write of 1 accepted while the key is B's"},
		{"6", "storage: keeps its promise as max-token storage with fence=rw (3 reads, 3 writes, 1 rejected); lock and storage agree"},
	}
	for _, tc := range cases {
		res, err := CheckStorage(loadRun(t, tc.demo), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != Ok || res.Summary != tc.want {
			t.Errorf("demo %s: %s %q\nwant %q", tc.demo, res.Verdict, res.Summary, tc.want)
		}
	}
}

func TestDescribeStorage(t *testing.T) {
	run := loadRun(t, "3")
	m := storageModel(promise{run.Design.Storage, run.Design.Fence})
	var got []string
	for _, op := range storageHistory(run) {
		got = append(got, m.DescribeOperation(op.Input, op.Output))
	}
	want := []string{
		"A: read → 0",
		"B: read → 0",
		"B: write 1 (token 34) → accepted",
		"C: read → 1",
		"A: write 1 (token 33) → rejected: 33 < 34  ✗ the key is C's",
		"C: write 2 (token 35) → accepted",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if s := m.DescribeState(storageState{Counter: 2, MaxTok: 35}); s != "counter 2, highest token 35" {
		t.Errorf("state %q", s)
	}
	if s := storageModel(promise{model.StorageCAS, model.FenceNone}).DescribeState(storageState{Counter: 2, Version: 2}); s != "counter 2, version 2" {
		t.Errorf("state %q", s)
	}
}

// Testing the storage model: a run whose storage answers are tampered with,
// or checked against the wrong mode, breaks the promise, and the summary
// names the first operation that does.
func TestStorageTampered(t *testing.T) {
	step := func(run *model.Run, client byte, kind model.ActionKind) *model.StepRecord {
		for k := range run.Steps {
			st := &run.Steps[k]
			if st.Action.Kind == kind && st.Action.Client == client-'A' {
				return st
			}
		}
		t.Fatalf("no %c %s", client, kind)
		return nil
	}
	cases := []struct {
		name   string
		demo   string
		tamper func(*model.Run)
		want   string
	}{
		{"late write accepted", "3", func(r *model.Run) { step(r, 'A', model.ActWrite).Event.Result = model.ResAccepted },
			"storage: breaks its promise as max-token storage with fence=write (t=15 A's write of 1 (token 33) accepted, but the storage had seen token 34)"},
		{"current write refused", "3", func(r *model.Run) { step(r, 'B', model.ActWrite).Event.Result = model.ResRejected },
			"storage: breaks its promise as max-token storage with fence=write (t=13 B's write of 1 (token 34) rejected, but max-token storage accepts it)"},
		{"stale read", "1", func(r *model.Run) { step(r, 'C', model.ActRead).Event.Value = 1 },
			"storage: breaks its promise as plain storage with fence=none (t=5 C's read returned 1, but the counter was 2)"},
		{"wrong reason", "6", func(r *model.Run) { step(r, 'A', model.ActWrite).Event.MaxTok = 35 },
			"storage: breaks its promise as max-token storage with fence=rw (t=12 A's write of 1 (token 33) refused citing token 35, but the highest seen was 34)"},
		{"checked as plain", "3", func(r *model.Run) { r.Design.Storage = model.StoragePlain },
			"storage: breaks its promise as plain storage with fence=write (t=15 A's write of 1 (token 33) rejected, but plain storage accepts it)"},
		{"checked as fence=none", "3", func(r *model.Run) { r.Design.Fence = model.FenceNone },
			"storage: breaks its promise as max-token storage with fence=none (t=13 B's write of 1 (token 34) carries token 34, but fence=none sends no token)"},
		{"checked as fence=rw", "3", func(r *model.Run) { r.Design.Fence = model.FenceRW },
			"storage: breaks its promise as max-token storage with fence=rw (t=1 A's read carries no token, but fence=rw sends one)"},
		{"checked as fence=write", "6", func(r *model.Run) { r.Design.Fence = model.FenceWrite },
			"storage: breaks its promise as max-token storage with fence=write (t=1 A's read (token 33) carries token 33, but fence=write sends tokens with writes only)"},
		{"checked as max-write", "6", func(r *model.Run) { r.Design.Storage = model.StorageMaxWrite },
			"storage: breaks its promise as max-write storage with fence=rw (t=12 A's write of 1 (token 33) rejected, but max-write storage accepts it)"},
	}
	for _, tc := range cases {
		run := loadRun(t, tc.demo)
		if res, _ := CheckStorage(run, Options{}); res.Verdict != Ok {
			t.Fatalf("%s: untampered: %s", tc.name, res.Summary)
		}
		tc.tamper(run)
		res, err := CheckStorage(run, Options{HTML: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != Illegal || res.Summary != tc.want {
			t.Errorf("%s: %s %q\nwant %q", tc.name, res.Verdict, res.Summary, tc.want)
		}
		if !strings.Contains(string(res.HTML), "Invalid LP") {
			t.Errorf("%s: no visualisation", tc.name)
		}
	}
}

// Each storage mode, with each fencing, keeps the promise the spec states
// on random runs (the cross-check walks cover the same with faults), and a
// run checked against another mode's spec is caught on some run, except
// for the pairs no run can tell apart (indistinct): the storage model is
// as sharp as the model's behaviour allows.
func TestStorageModesDistinct(t *testing.T) {
	modes := []string{"plain", "max-token", "max-write", "cond-update", "cas"}
	rng := rand.New(rand.NewPCG(11, 3))
	for _, fence := range []string{"write", "rw"} {
		for _, mode := range modes {
			d, err := model.ParseDesign("redis/cad/" + fence + "/" + mode + ",acquire=incr-after,pauses=1,slow=1,crashes=1")
			if err != nil {
				t.Fatal(err)
			}
			caught := map[string]bool{}
			for w := 0; w < 400; w++ {
				run, err := model.Replay(&d, randomWalk(&d, rng, 400))
				if err != nil {
					t.Fatal(err)
				}
				for _, other := range modes {
					r := *run
					r.Design.Storage = storageByName(t, other)
					res, err := CheckStorage(&r, Options{})
					if err != nil {
						t.Fatal(err)
					}
					if other == mode && res.Verdict != Ok {
						t.Fatalf("%s: %s\n%s", d.Name(), res.Summary, model.Render(run))
					}
					if res.Verdict == Illegal {
						caught[other] = true
					}
				}
			}
			for _, other := range modes {
				if other != mode && caught[other] == indistinct(fence, mode, other) {
					t.Errorf("%s checked as %s: told apart %v, want %v", d.Name(), other, caught[other], !indistinct(fence, mode, other))
				}
			}
		}
	}
}

// indistinct lists the pairs of modes that no run of the model tells
// apart: every client writes once with its own token, so equal tokens never
// meet (cond-update's "greater" and max-*'s "not smaller" agree), and with
// tokens on writes only the storage never sees a read's token (max-token
// and max-write agree). With tokens on reads too, each pair differs: max-*
// refuse old reads, cond-update does not; max-token records reads' tokens,
// max-write does not.
func indistinct(fence, a, b string) bool {
	pair := func(x, y string) bool { return (a == x && b == y) || (a == y && b == x) }
	return fence == "write" && (pair("max-token", "cond-update") || pair("max-write", "cond-update") || pair("max-token", "max-write"))
}

func storageByName(t testing.TB, name string) model.StorageMode {
	d, err := model.ParseDesign("redis/cad/none/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return d.Storage
}

// A rejection of the key's holder: with the token taken after the key
// (acquire=incr-after), a client that lost its key during a pause can hold
// a higher token than the next holder, and the storage then sides with it.
func TestStorageRejectsHolder(t *testing.T) {
	d, err := model.ParseDesign("redis/cad/write/max-token,acquire=incr-after,pauses=1")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for w := 0; w < 5000; w++ {
		run, err := model.Replay(&d, randomWalk(&d, rng, 400))
		if err != nil {
			t.Fatal(err)
		}
		res, err := CheckStorage(run, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, dg := range res.Disagreements {
			if !dg.Accepted && dg.Holder == dg.Client {
				if !strings.Contains(dg.Text, "rejected although "+clientName(dg.Client)+" holds the key") {
					t.Fatalf("text %q", dg.Text)
				}
				t.Logf("walk %d: %s; %s", w, dg.Text, res.Summary)
				return
			}
		}
	}
	t.Fatal("no rejected holder found in 5000 walks")
}
