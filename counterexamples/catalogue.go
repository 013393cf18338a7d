package counterexamples

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"lockcheck/explore"
	"lockcheck/model"
)

// Catalogue is the designs whose counterexamples are checked in beside this
// file. Every value of every axis (lock, acquire, release, fence, storage,
// clock, quorum, check, wait, tx) and every fault of the budget is in at
// least one of them, and each design breaks at least one always property.
// The folder holds, for each design and each always property it breaks,
// the shortest counterexample that breadth-first search finds. The list is
// this package's own, apart from the properties' catalogue; names are
// presets or canonical design names.
var Catalogue = []string{
	// The seed's demos.
	// GC pause, no fencing: the seed's lost update
	"demo2",
	// fencing token on writes only: a stale read still loses an update
	"demo3",
	// slow job + plain DEL: a release removes another client's lock
	"demo4",
	// slow job, check-and-delete: the late write still lands
	"demo5",
	// token on reads and writes: lock-unsafe, data-safe
	"demo6",

	// One Redis node, axis by axis.
	// plain DEL, with a pause
	"redis/del/none/plain",
	// GET then DEL: the key changes hands between them
	"redis/get-del/none/plain",
	// GET then DEL breaks the lock even with full fencing
	"redis/get-del/rw/max-token",
	// storage records only writes' tokens: reads are not fenced
	"redis/cad/rw/max-write",
	// UPDATE … WHERE last_token < t: reads are not fenced
	"redis/cad/rw/cond-update",
	// compare-and-set: lock-unsafe, data-safe
	"redis/cad/none/cas",
	// token taken before the lock
	"redis/cad/rw/max-token,acquire=incr-before",
	// token taken after the lock, as a second request
	"redis/cad/rw/max-token,acquire=incr-after",
	// crash between SET NX and EXPIRE: the lock never frees
	"redis/cad/none/plain,acquire=set-expire,pauses=0,crashes=1",
	// clients may be late without any fault (a shorter horizon keeps the
	// search small: every tick may fall anywhere)
	"redis/cad/none/plain,clock=free,horizon=20,pauses=0",
	// checking the validity left does not help: the pause falls after the check
	"redis/cad/none/plain,check=validity",
	// pub/sub wait: an expiry publishes nothing, waiters sleep on
	"redis/cad/none/plain,wait=notify",
	// a watchdog renews the TTL, but a pause stops it too
	"redis/cad/none/plain,renew=3",
	// the node restarts empty: the fence counter starts again, tokens repeat
	"redis/cad/rw/max-token,pauses=0,node-crashes=1",
	// the node's clock jumps: the key expires under its holder
	"redis/cad/none/plain,pauses=0,jumps=1,jump=10",
	// a write held in the network lands after the lock has moved on
	"redis/cad/none/plain,pauses=0,delays=1,max-delay=15",

	// The other lock services.
	// failover before replication: the replica never saw the key or the fence
	"replica/cad/rw/max-token,pauses=0",
	// Redlock: a pause outlives the lock on every node
	"redlock/cad/none/plain,nodes=3",
	// Redlock: a node restarts empty and a second client wins a majority
	"redlock/cad/none/plain,pauses=0,nodes=3,node-crashes=1",
	// Redlock: a node's clock jumps, even with the validity check
	"redlock/cad/none/plain,check=validity,pauses=0,nodes=3,jumps=1,jump=10",
	// Redlock winning every node: a pause still outlives the lock
	"redlock/cad/none/plain,quorum=all,clients=2,nodes=3",
	// etcd lease: a pause outlives the lease
	"etcd/cad/none/plain",
	// ZooKeeper: a pause outlives the session, its node vanishes
	"zookeeper/cad/none/plain",
	// database row lock, work inside the transaction: lock-unsafe, data-safe
	"db/cad/none/plain",
	// database row lock, work outside it: the session is killed, an update is lost
	"db/cad/none/plain,tx=outside",
}

// RegenCommand is the command that regenerates the catalogue's files.
const RegenCommand = "go run ./cmd/explore regen"

// IndexName is the folder's generated index.
const IndexName = "README.md"

// SearchBounds are the bounds the catalogue is searched with: no limit on
// steps or states (the horizon and the fault budget keep the space finite),
// symmetry on.
var SearchBounds = explore.Bounds{Symmetry: true}

// Found is one broken (design, property) of the catalogue.
type Found struct {
	Name     string // as in the catalogue (a preset stays "demo2")
	Property string
	Rendered *Rendered
}

// Generate searches every catalogue design and renders each shortest
// counterexample; displayDir is the folder as the files' replay commands
// name it (counterexamples). It fails if a design does not parse, a search
// is incomplete, or a design breaks nothing.
func Generate(displayDir string) ([]Found, error) {
	var out []Found
	seen := map[model.Design]string{}
	for _, name := range Catalogue {
		d, err := model.ParseDesign(name)
		if err != nil {
			return nil, fmt.Errorf("catalogue design %q: %v", name, err)
		}
		if !isPreset(name) && name != d.Name() {
			return nil, fmt.Errorf("catalogue design %q: write it as its canonical name %q", name, d.Name())
		}
		if prev, dup := seen[d]; dup {
			return nil, fmt.Errorf("catalogue design %q is %q again (%s)", name, prev, d.Name())
		}
		seen[d] = name
		rep, err := explore.Check(explore.Config{Design: d, Bounds: SearchBounds})
		if err != nil {
			return nil, fmt.Errorf("catalogue design %q: %v", name, err)
		}
		broken := 0
		for _, res := range rep.Results {
			if res.Expect != model.Always {
				continue
			}
			switch res.Status {
			case explore.Incomplete:
				return nil, fmt.Errorf("catalogue design %q: the search of %s is incomplete", name, res.Property)
			case explore.Violated:
				broken++
				base := FileBase(d, res.Property)
				r, err := Render(Counterexample{
					Design:     d,
					Property:   res.Property,
					Trace:      res.Trace,
					Bounds:     BoundsText(d, SearchBounds),
					Regenerate: RegenCommand,
				}, path.Join(displayDir, base+".txt"))
				if err != nil {
					return nil, fmt.Errorf("catalogue design %q: %v", name, err)
				}
				out = append(out, Found{Name: name, Property: res.Property, Rendered: r})
			}
		}
		if broken == 0 {
			return nil, fmt.Errorf("catalogue design %q (%s) breaks no always property: it has no counterexample to check in", name, d.Name())
		}
	}
	return out, nil
}

// Outputs are every file of the folder: each counterexample's files and
// the index, sorted by name.
func Outputs(found []Found) []Output {
	var outs []Output
	for _, f := range found {
		outs = append(outs, f.Rendered.Outputs()...)
	}
	outs = append(outs, Output{IndexName, index(found)})
	sort.Slice(outs, func(i, j int) bool { return outs[i].Name < outs[j].Name })
	return outs
}

func index(found []Found) []byte {
	var b strings.Builder
	b.WriteString("# Counterexamples\n\n")
	b.WriteString("Generated by `" + RegenCommand + "` from the catalogue in `catalogue.go`: do not edit.\n")
	b.WriteString("For each design of the catalogue and each always property it breaks, the shortest\n")
	b.WriteString("counterexample that breadth-first search finds, with clients renamed A, B, C in order\n")
	b.WriteString("of appearance. Each `.txt` tells the story, draws the seed's timeline and ends with the\n")
	b.WriteString("trace in scenario syntax; `go run ./cmd/explore replay FILE` runs it again. Each `.html`\n")
	b.WriteString("draws the same timeline as a web page.\n\n")
	b.WriteString("`go test ./counterexamples` replays every file and regenerates them all (golden);\n")
	b.WriteString("`go test ./counterexamples -rewrite` or `" + RegenCommand + "` rewrites them: read the diff before committing.\n\n")
	b.WriteString("| design | property | steps | files |\n|---|---|---|---|\n")
	for _, f := range found {
		r := f.Rendered
		name := "`" + r.Run.Design.Name() + "`"
		if f.Name != r.Run.Design.Name() {
			name = f.Name + " " + name
		}
		prop := f.Property
		at, _ := r.Run.Violated(prop)
		links := fmt.Sprintf("[text](%s.txt) · [timeline](%s.html)", r.Base, r.Base)
		if r.Porcupine != nil {
			links += fmt.Sprintf(" · [porcupine](%s-porcupine.html)", r.Base)
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %s |\n", name, prop, at, links)
	}
	return []byte(b.String())
}

// generated reports whether a file name in the folder is one that Regen
// writes (and so removes when the catalogue no longer makes it).
func generated(name string) bool {
	if strings.HasPrefix(name, ".") {
		return false
	}
	return strings.HasSuffix(name, ".txt") || strings.HasSuffix(name, ".html") || name == IndexName
}

// Regen makes the catalogue's files and compares them with dir. Unless
// check is set, it writes those that differ (atomically) and removes
// generated files that the catalogue no longer makes. It returns what
// differed: "NAME: changed", "NAME: missing", "NAME: not generated".
// displayDir is the folder as the files' replay commands name it.
func Regen(dir, displayDir string, check bool) ([]string, error) {
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return nil, fmt.Errorf("folder %s not found (run from the repository root, or pass -dir)", dir)
	}
	found, err := Generate(displayDir)
	if err != nil {
		return nil, err
	}
	return syncDir(dir, Outputs(found), check)
}

// syncDir compares outs with dir and, unless check is set, writes those that
// differ and removes generated files not among them.
func syncDir(dir string, outs []Output, check bool) ([]string, error) {
	want := map[string]bool{}
	var diffs []string
	for _, o := range outs {
		want[o.Name] = true
		old, err := os.ReadFile(filepath.Join(dir, o.Name))
		switch {
		case err == nil && bytes.Equal(old, o.Data):
			continue
		case err == nil:
			diffs = append(diffs, o.Name+": changed")
		case os.IsNotExist(err):
			diffs = append(diffs, o.Name+": missing")
		default:
			return nil, err
		}
		if !check {
			if err := WriteFileAtomic(filepath.Join(dir, o.Name), o.Data); err != nil {
				return nil, err
			}
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries { // ReadDir sorts by name
		if e.IsDir() || !generated(e.Name()) || want[e.Name()] {
			continue
		}
		diffs = append(diffs, e.Name()+": not generated")
		if !check {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return nil, err
			}
		}
	}
	return diffs, nil
}
