package reality

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lockcheck/model"
)

// TestCounterexampleFilesLoadOrAreNotPlayable: every checked-in
// counterexample file either loads for a real run or is refused with the
// typed answer (NotPlayable, "cannot be played for real, because …"),
// never with an error of another kind: the sweep of every file
// (LOCKCHECK_REALITY_ALL=1) skips exactly these, and fails on anything else.
func TestCounterexampleFilesLoadOrAreNotPlayable(t *testing.T) {
	paths, err := filepath.Glob("../counterexamples/*.txt")
	if err != nil || len(paths) < 100 {
		t.Fatalf("%d files, %v", len(paths), err)
	}
	played, refused := 0, 0
	for _, p := range paths {
		if filepath.Base(p) == "README.txt" {
			continue
		}
		text, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Load(p, string(text))
		np, ok := IsNotPlayable(err)
		switch {
		case err == nil:
			played++
		case ok:
			refused++
			if np.Because == "" || !strings.Contains(err.Error(), "cannot be played for real, because ") {
				t.Errorf("%s: %v", p, err)
			}
		default:
			t.Errorf("%s: refused, but not as NotPlayable: %v", p, err)
		}
	}
	t.Logf("%d files load for a real run, %d cannot be played for real", played, refused)
}

func TestNotPlayableWords(t *testing.T) {
	d, err := model.ParseDesign("redis/cad/none/plain,jumps=1")
	if err != nil {
		t.Fatal(err)
	}
	err = Playable(&d)
	np, ok := IsNotPlayable(err)
	if !ok || np.Design != d.Name() || np.Client != "" {
		t.Fatalf("%#v", err)
	}
	if want := "design " + d.Name() + " cannot be played for real, because "; !strings.HasPrefix(err.Error(), want) || strings.Contains(np.Because, "design ") {
		t.Fatalf("%q", err)
	}
	d, _ = model.ParseDesign("redis/cad/none/plain")
	if err := Playable(&d); err != nil {
		t.Fatal(err)
	}
	// the sweep found a Redlock client skipping the external counter's INCR
	d, err = model.ParseDesign("redlock/cad/rw/max-token,counter=external,nodes=3")
	if err != nil {
		t.Fatal(err)
	}
	if np, ok := IsNotPlayable(Playable(&d)); !ok || !strings.Contains(np.Because, "counter=external") {
		t.Fatalf("%v", np)
	}
	// the token check and the write are two scripts (scripts.go)
	d, err = model.ParseDesign("redis/cad/rw/max-token,fence-check=two-step")
	if err != nil {
		t.Fatal(err)
	}
	if err := Playable(&d); err != nil {
		t.Fatal(err)
	}
	// a storage failover and stale reads: a real primary and replica (storage_replica.go);
	// the token check kept apart from the counter is not
	d, err = model.ParseDesign("redis/cad/rw/max-token,storage-failovers=1")
	if err != nil {
		t.Fatal(err)
	}
	if err := Playable(&d); err != nil {
		t.Fatal(err)
	}
	d, err = model.ParseDesign("redis/cad/rw/max-token,stale-reads=2")
	if err != nil {
		t.Fatal(err)
	}
	if err := Playable(&d); err != nil {
		t.Fatal(err)
	}
	d, err = model.ParseDesign("redis/cad/rw/max-token,storage-failovers=1,storage-loses=fence")
	if err != nil {
		t.Fatal(err)
	}
	if err := Playable(&d); err != nil { // the fencing state apart from the row (storage_replica.go)
		t.Fatal(err)
	}
}
