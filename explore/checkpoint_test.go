package explore

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"lockcheck/model"
)

// sameResumed compares a resumed search's report with the uninterrupted
// one's: verdicts, traces, counts, coverage, the visited set's bytes and
// the bitstate figures.
func sameResumed(t *testing.T, what string, want, got *Report) {
	t.Helper()
	sameReport(t, what, want, got)
	if want.Coverage != got.Coverage {
		t.Errorf("%s: coverage %+v, want %+v", what, got.Coverage, want.Coverage)
	}
	if want.Stats.VisitedBytes != got.Stats.VisitedBytes {
		t.Errorf("%s: visited bytes %d, want %d", what, got.Stats.VisitedBytes, want.Stats.VisitedBytes)
	}
	if !reflect.DeepEqual(want.Stats.Bitstate, got.Stats.Bitstate) {
		t.Errorf("%s: bitstate %+v, want %+v", what, got.Stats.Bitstate, want.Stats.Bitstate)
	}
	for i := range want.Results {
		if want.Results[i].Vacuous != got.Results[i].Vacuous || !reflect.DeepEqual(want.Results[i].Trace, got.Results[i].Trace) {
			t.Errorf("%s: %s: %+v, want %+v", what, want.Results[i].Property, got.Results[i], want.Results[i])
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A search resumed from the checkpoint of any level ends as the search
// that was never stopped: the same verdicts, traces, states, transitions,
// coverage and table sizes, with and without symmetry, bitstate, the
// frontier on disk, a state bound, -first, and any number of workers.
func TestResumeFromEveryLevelGivesTheSameReport(t *testing.T) {
	cases := []struct {
		name  string
		b     Bounds
		first bool
	}{
		{"demo2", Bounds{Symmetry: true}, false},
		{"demo6", Bounds{}, false},
		{"redis/del/none/plain,clients=2,crashes=1,slow=1", Bounds{Symmetry: true, Workers: 1}, false},
		{"redis/del/none/plain,clients=2,crashes=1,slow=1", Bounds{Bitstate: MinBitstate}, false},
		{"demo2", Bounds{Symmetry: true, MaxStates: 3000}, false},
		{"demo2", Bounds{}, true},
		{"redis/cad/none/plain,clients=2,delays=1,timeout=3,losses=1", Bounds{Symmetry: true, FrontierDir: "tmp"}, false},
		{"demo6", Bounds{Compact: true}, false},
		{"redis/del/none/plain,clients=2,crashes=1,slow=1", Bounds{Symmetry: true, Compact: true}, false},
	}
	for _, c := range cases {
		d := design(t, c.name)
		b := c.b
		if b.FrontierDir != "" {
			b.FrontierDir = t.TempDir()
		}
		what := fmt.Sprintf("%s %+v first=%v", c.name, c.b, c.first)
		want := check(t, Config{Design: d, Bounds: b, First: c.first})
		dir := t.TempDir()
		saved := map[int]string{}
		var order []int
		withCk := check(t, Config{Design: d, Bounds: b, First: c.first, Checkpoint: &Checkpoint{Dir: dir, Every: 1, Written: func(ci CheckpointInfo) {
			if ci.Path != filepath.Join(dir, CheckpointFile) {
				t.Errorf("checkpoint at %s", ci.Path)
			}
			k := t.TempDir()
			copyFile(t, ci.Path, filepath.Join(k, CheckpointFile))
			saved[ci.Depth] = k
			order = append(order, ci.Depth)
		}}})
		sameResumed(t, what+" with checkpoints", want, withCk)
		if len(saved) < 5 {
			t.Fatalf("%s: %d checkpoints", what, len(saved))
		}
		// a few levels: the first, two in the middle, the last
		for _, k := range []int{order[0], order[len(order)/3], order[2*len(order)/3], order[len(order)-1]} {
			for _, w := range []int{1, 2} {
				rb := b
				rb.Workers = w
				got := check(t, Config{Design: d, Bounds: rb, First: c.first, Resume: saved[k]})
				sameResumed(t, fmt.Sprintf("%s resumed at depth %d, workers %d", what, k, w), want, got)
			}
		}
	}
}

// Stop ends the search at the end of its level with a checkpoint; the
// partial report says what was proved, and resuming gives the whole one.
func TestCheckpointStopThenResume(t *testing.T) {
	d := design(t, "redis/del/none/plain,clients=2,crashes=1,slow=1")
	want := check(t, Config{Design: d, Bounds: Bounds{Symmetry: true}})
	// Stop at chosen levels, from Written of a checkpoint written at every level
	for _, at := range []int{1, 7, 20} {
		dir := t.TempDir()
		ctx, cancel := context.WithCancel(context.Background())
		part := check(t, Config{Design: d, Bounds: Bounds{Symmetry: true}, Checkpoint: &Checkpoint{Dir: dir, Every: 1, Stop: ctx, Written: func(ci CheckpointInfo) {
			if ci.Depth == at-1 {
				cancel()
			}
		}}})
		cancel()
		if part.Stats.StoppedBy != "interrupted" || part.Stats.Proved != at || part.Stats.Depth != at {
			t.Errorf("stopped after level %d: stats %+v", at, part.Stats)
		}
		got := check(t, Config{Design: d, Bounds: Bounds{Symmetry: true}, Resume: dir})
		sameResumed(t, fmt.Sprintf("stopped at %d, resumed", at), want, got)
	}
}

// A checkpoint of another search is refused with one line naming the
// difference; a damaged one is called corrupt.
func TestResumeRefusesAnotherSearch(t *testing.T) {
	d := design(t, "demo2")
	dir := t.TempDir()
	check(t, Config{Design: d, Bounds: Bounds{Symmetry: true, MaxSteps: 10}, Checkpoint: &Checkpoint{Dir: dir, Every: 1}})
	path := filepath.Join(dir, CheckpointFile)
	other := design(t, "demo3")
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Design: other, Bounds: Bounds{Symmetry: true, MaxSteps: 10}}, "it is of design redis/cad/none/plain, not redis/cad/write/max-token,token=33"},
		{Config{Design: d, Bounds: Bounds{Symmetry: true, MaxSteps: 11}}, "its bounds are steps=10 "},
		{Config{Design: d, Bounds: Bounds{MaxSteps: 10}}, "symmetry=true"},
		{Config{Design: d, Bounds: Bounds{Symmetry: true, MaxSteps: 10}, Properties: []model.Property{model.Properties[0]}}, "it checks properties "},
		{Config{Design: d, Bounds: Bounds{Symmetry: true, MaxSteps: 10}, First: true}, "first=false"},
		{Config{Design: d, Bounds: Bounds{Symmetry: true, MaxSteps: 10, Compact: true}}, "compact"},
	} {
		c.cfg.Resume = dir
		_, err := Check(c.cfg)
		if err == nil || !errors.Is(err, ErrCheckpoint) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("resume %+v: err %v, want one line with %q", c.cfg.Bounds, err, c.want)
		}
	}
	// another program version: a model digest that differs
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(good, []byte(`"model":"`)) + len(`"model":"`)
	bad := bytes.Clone(good)
	bad[i] ^= 1
	fixHeaderCRC(t, bad)
	os.WriteFile(path, bad, 0o644)
	if _, err := Check(Config{Design: d, Bounds: Bounds{Symmetry: true, MaxSteps: 10}, Resume: dir}); err == nil || !strings.Contains(err.Error(), "another version of the program") {
		t.Errorf("another model: %v", err)
	}
	// damage: a flipped byte anywhere, a cut, nothing
	for _, k := range []int{0, 9, 20, len(good) / 2, len(good) - 12, len(good) - 1} {
		bad := bytes.Clone(good)
		bad[k] ^= 0x40
		os.WriteFile(path, bad, 0o644)
		_, err := Check(Config{Design: d, Bounds: Bounds{Symmetry: true, MaxSteps: 10}, Resume: dir})
		if err == nil || !errors.Is(err, ErrCheckpoint) || strings.Contains(err.Error(), "\n") {
			t.Errorf("byte %d flipped: %v", k, err)
		}
	}
	for _, n := range []int{0, 5, len(good) / 3, len(good) - 1} {
		os.WriteFile(path, good[:n], 0o644)
		_, err := Check(Config{Design: d, Bounds: Bounds{Symmetry: true, MaxSteps: 10}, Resume: dir})
		if err == nil || !errors.Is(err, ErrCheckpoint) {
			t.Errorf("cut at %d: %v", n, err)
		}
	}
	os.Remove(path)
	if _, err := Check(Config{Design: d, Bounds: Bounds{Symmetry: true, MaxSteps: 10}, Resume: dir}); err == nil || !strings.Contains(err.Error(), "no checkpoint") {
		t.Errorf("no file: %v", err)
	}
}

// fixHeaderCRC recomputes the header's CRC after a test edited it.
func fixHeaderCRC(t *testing.T, b []byte) {
	t.Helper()
	n := int(uint32(b[12]) | uint32(b[13])<<8 | uint32(b[14])<<16 | uint32(b[15])<<24)
	sum := crc32.Checksum(b[16:16+n], crcTable)
	for k := 0; k < 4; k++ {
		b[16+n+k] = byte(sum >> (8 * k))
	}
}

// FuzzResume: whatever the checkpoint file holds, resuming returns an
// error or a report, never panics or allocates past the file.
func FuzzResume(f *testing.F) {
	d := design(f, "redis/cad/none/plain,clients=2")
	dir := f.TempDir()
	check(f, Config{Design: d, Bounds: Bounds{Symmetry: true, MaxSteps: 6}, Checkpoint: &Checkpoint{Dir: dir, Every: 1}})
	good, err := os.ReadFile(filepath.Join(dir, CheckpointFile))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte("LOCKCKPT"))
	f.Fuzz(func(t *testing.T, b []byte) {
		e := &engine{d: d, props: model.PropertiesFor(&d), pk: model.NewPacking(&d), set: newFPSet(), trail: newTrail(), bounds: Bounds{Symmetry: true, MaxSteps: 6}}
		e.done = make([]bool, len(e.props))
		e.rep = &Report{Results: make([]Result, len(e.props))}
		e.stride = e.pk.Size()
		e.pool.stride = e.stride
		e.boundsKey = boundsKey(e.bounds, &Config{})
		e.modelDigest = modelDigest(&d, e.pk)
		_, _, err := e.decodeFrom("fuzz", bytes.NewReader(b), int64(len(b)))
		if err != nil && !errors.Is(err, ErrCheckpoint) {
			t.Fatalf("error %v does not wrap ErrCheckpoint", err)
		}
	})
}

// The visited set read back from a checkpoint is the table that was
// written: the same slots, lengths and capacities in every segment, for
// random fingerprints and ones crowded at the segments' ends.
func TestFPSetCheckpointRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, crowd := range []bool{false, true} {
		set := newFPSet()
		for range 300_000 {
			fp := rng.Uint64()
			if crowd {
				fp |= 1<<(64-segBits) - 1<<(64-segBits-6) // the last 64th of each segment
			}
			set.insert(fp)
		}
		var buf bytes.Buffer
		w := &ckWriter{w: bufio.NewWriter(&buf), crc: crc32.New(crcTable)}
		set.encode(w)
		if w.err != nil || w.w.Flush() != nil {
			t.Fatal(w.err)
		}
		got := newFPSet()
		r := &ckReader{r: bufio.NewReader(bytes.NewReader(buf.Bytes())), crc: crc32.New(crcTable), left: int64(buf.Len())}
		if err := got.decode(r); err != nil {
			t.Fatal(err)
		}
		for g := range set.segs {
			a, b := &set.segs[g], &got.segs[g]
			if a.n != b.n || a.count != b.count || len(a.slots) != len(b.slots) || cap(a.slots) != cap(b.slots) || !slices.Equal(a.slots, b.slots) {
				t.Fatalf("crowd=%v segment %d: n %d/%d count %d/%d len %d/%d cap %d/%d", crowd, g, b.n, a.n, b.count, a.count, len(b.slots), len(a.slots), cap(b.slots), cap(a.slots))
			}
		}
		if uint64(buf.Len()) > uint64(set.len())*8+numSegs*16 {
			t.Errorf("%d bytes for %d fingerprints", buf.Len(), set.len())
		}
	}
}

// The compact visited set read back from a checkpoint is the table that was
// written: the same slots, lengths and capacities in every segment, for
// random fingerprints and ones crowded at the segments' ends (clusters in
// lengthened tails).
func TestCPSetCheckpointRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, crowd := range []bool{false, true} {
		set := newCPSet()
		for range 300_000 {
			fp := rng.Uint64()
			if crowd {
				fp |= 1<<(64-segBits) - 1<<(64-segBits-6) // the last 64th of each segment
			}
			set.insert(fp)
		}
		var buf bytes.Buffer
		w := &ckWriter{w: bufio.NewWriter(&buf), crc: crc32.New(crcTable)}
		set.encode(w)
		if w.err != nil || w.w.Flush() != nil {
			t.Fatal(w.err)
		}
		got := newCPSet()
		r := &ckReader{r: bufio.NewReader(bytes.NewReader(buf.Bytes())), crc: crc32.New(crcTable), left: int64(buf.Len())}
		if err := got.decode(r); err != nil {
			t.Fatal(err)
		}
		for g := range set.segs {
			a, b := &set.segs[g], &got.segs[g]
			if a.n != b.n || a.size != b.size || a.count != b.count || a.bytes() != b.bytes() || !slices.Equal(a.rem, b.rem) ||
				!slices.Equal(a.occ, b.occ) || !slices.Equal(a.used, b.used) || !slices.Equal(a.end, b.end) {
				t.Fatalf("crowd=%v segment %d: n %d/%d size %d/%d count %d/%d bytes %d/%d", crowd, g, b.n, a.n, b.size, a.size, b.count, a.count, b.bytes(), a.bytes())
			}
		}
		if uint64(buf.Len()) > uint64(set.len())*8+numSegs*16 {
			t.Errorf("%d bytes for %d fingerprints", buf.Len(), set.len())
		}
	}
}

// FuzzResumeCompact is FuzzResume with the compact table (Bounds.Compact),
// whose segments decode through their own checks.
func FuzzResumeCompact(f *testing.F) {
	d := design(f, "redis/cad/none/plain,clients=2")
	dir := f.TempDir()
	b0 := Bounds{Symmetry: true, MaxSteps: 6, Compact: true}
	check(f, Config{Design: d, Bounds: b0, Checkpoint: &Checkpoint{Dir: dir, Every: 1}})
	good, err := os.ReadFile(filepath.Join(dir, CheckpointFile))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Fuzz(func(t *testing.T, b []byte) {
		e := &engine{d: d, props: model.PropertiesFor(&d), pk: model.NewPacking(&d), cset: newCPSet(), trail: newTrail(), bounds: b0}
		e.done = make([]bool, len(e.props))
		e.rep = &Report{Results: make([]Result, len(e.props))}
		e.stride = e.pk.Size()
		e.pool.stride = e.stride
		e.boundsKey = boundsKey(e.bounds, &Config{})
		e.modelDigest = modelDigest(&d, e.pk)
		_, _, err := e.decodeFrom("fuzz", bytes.NewReader(b), int64(len(b)))
		if err != nil && !errors.Is(err, ErrCheckpoint) {
			t.Fatalf("error %v does not wrap ErrCheckpoint", err)
		}
	})
}
