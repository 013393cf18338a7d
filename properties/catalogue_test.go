package properties

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"

	"lockcheck/catalogue"
	"lockcheck/explore"
	"lockcheck/model"
)

// The suite checks every design of the project's catalogue
// (lockcheck/catalogue: every lock service and every value of every axis;
// a new design there is one line, and it is checked here too), and a few
// more that exercise the schedule drawing: faults that must fall late in a
// run, two faults at once, time that may pass at any moment. What each
// design is expected to do is written nowhere: exhaustive search decides
// it (expectationFor).
var extraDesigns = []string{
	"redis/get-del/rw/cond-update,slow=1",               // a pause between GET and DEL, and a slow job
	"redis/cad/write/max-token,acquire=incr-before",     // write-only fencing loses an update
	"redis/cad/none/plain,acquire=set-expire,crashes=1", // a crash between SET NX and EXPIRE, with a pause
	"redis/cad/rw/max-token,crashes=1",                  // a client crash and a pause
	"redis/cad/rw/max-token,pauses=2",                   // two pauses
	"redis/cad/rw/max-token,clock=free,pauses=0",        // lateness without faults
}

// suiteDesigns are the designs TestDesigns, FuzzSchedules and the
// measurements check: the one -properties.design names, or else
// catalogueDesigns.
func suiteDesigns() ([]string, error) {
	if *designFlag != "" {
		name, err := flagDesign(*designFlag)
		if err != nil {
			return nil, err
		}
		return []string{name}, nil
	}
	return catalogueDesigns()
}

// flagDesign checks the design -properties.design names (value): the name
// must parse, and exhaustive search must complete on it, as the suite
// judges rapid against a complete search. The error is one line.
func flagDesign(value string) (string, error) {
	name := strings.TrimSpace(value)
	d, err := model.ParseDesign(name)
	if err != nil {
		return "", fmt.Errorf("-properties.design: %v", err)
	}
	if _, err := expectationFor(d); err != nil {
		return "", fmt.Errorf("-properties.design: %v", err)
	}
	return name, nil
}

// catalogueDesigns is the catalogue followed by the extra designs, each
// once: what the suite checks by default, and where TestPlantedBugs and
// TestSuiteCoversTheModel look whatever -properties.design says.
func catalogueDesigns() ([]string, error) {
	var names []string
	seen := map[string]string{}
	for _, name := range append(catalogue.Names(), extraDesigns...) {
		d, err := model.ParseDesign(name)
		if err != nil {
			return nil, fmt.Errorf("design %q: %v", name, err)
		}
		if prev, dup := seen[d.Name()]; dup {
			return nil, fmt.Errorf("designs %q and %q are the same design %s", prev, name, d.Name())
		}
		seen[d.Name()] = name
		names = append(names, name)
	}
	return names, nil
}

// bfsBounds bound the exhaustive search that decides each design's
// expectation. The single-Redis designs are complete far below them.
var bfsBounds = explore.Bounds{Symmetry: true, MaxStates: 1 << 21}

// verdict is what exhaustive search says about one property of a design.
type verdict struct {
	prop  model.Property
	index int            // in expectation.verdicts
	shows bool           // Always: violated; Sometimes: seen
	trace []model.Action // the shortest counterexample or witness
}

// expectation is a design's verdicts from exhaustive search.
type expectation struct {
	design   model.Design
	verdicts []verdict // one per property searched, in order
	states   int64
}

// violated lists the Always properties exhaustive search breaks.
func (e *expectation) violated() []verdict {
	var out []verdict
	for _, v := range e.verdicts {
		if v.prop.Expect == model.Always && v.shows {
			out = append(out, v)
		}
	}
	return out
}

// verdict finds a property's verdict by name.
func (e *expectation) verdict(name string) (verdict, bool) {
	for _, v := range e.verdicts {
		if v.prop.Name == name {
			return v, true
		}
	}
	return verdict{}, false
}

var (
	expectMu    sync.Mutex
	expectCache = map[string]*expectation{}
)

// expectationFor runs exhaustive search on design d for every property of
// the model (once per run of the tests) and returns its verdicts.
func expectationFor(d model.Design) (*expectation, error) {
	return expectationWith(d, model.Properties)
}

// expectationWith runs exhaustive search on design d for props (once per
// run of the tests for each design and list of properties). A search that
// does not complete within bfsBounds is an error: the suite judges rapid
// against complete searches only.
func expectationWith(d model.Design, props []model.Property) (*expectation, error) {
	key := d.Name()
	for _, p := range props {
		key += " " + p.Name
	}
	expectMu.Lock()
	defer expectMu.Unlock()
	if e, ok := expectCache[key]; ok {
		return e, nil
	}
	name := d.Name()
	rep, err := explore.Check(explore.Config{Design: d, Properties: props, Bounds: bfsBounds})
	if err != nil {
		return nil, fmt.Errorf("design %s: exhaustive search: %v", name, err)
	}
	if !rep.Stats.Complete {
		return nil, fmt.Errorf("design %s: exhaustive search did not complete within %d states (depth %d): the suite needs a complete search to judge rapid; make the design smaller (fewer clients, nodes or faults)", name, bfsBounds.MaxStates, rep.Stats.Depth)
	}
	e := &expectation{design: d, states: rep.Stats.Distinct}
	for i, p := range props {
		res, ok := rep.Result(p.Name)
		if !ok {
			return nil, fmt.Errorf("design %s: exhaustive search gave no verdict for %s", name, p.Name)
		}
		v := verdict{prop: p, index: i}
		switch res.Status {
		case explore.Violated, explore.Seen:
			v.shows, v.trace = true, res.Trace
		case explore.Holds, explore.NotSeen:
		default:
			return nil, fmt.Errorf("design %s: property %s: status %q from a complete search", name, p.Name, res.Status)
		}
		e.verdicts = append(e.verdicts, v)
	}
	expectCache[key] = e
	return e, nil
}

// TestSuiteCoversTheModel checks that the suite's designs take every value
// of every axis of the model, enumerated from the model's own words (so a
// new value, a new lock service say, fails here until a design uses it),
// and that every kind of fault of the model can happen in one of them.
func TestSuiteCoversTheModel(t *testing.T) {
	names, err := catalogueDesigns()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	faults := map[model.ActionKind]bool{}
	for _, name := range names {
		d, err := model.ParseDesign(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range axisValues(d) {
			have[v] = true
		}
		if d.NodeCrashes > 0 {
			have["persistence="+persistence(d)] = true
		}
		for _, k := range learn(&d).faultKinds {
			faults[k] = true
		}
	}
	var zero model.Design
	for _, v := range axisValues(zero) {
		axis, _, _ := strings.Cut(v, "=")
		for i := 0; i < 256; i++ {
			w := axisValue(axis, i)
			if strings.Contains(w, "(") {
				break
			}
			if !have[axis+"="+w] {
				t.Errorf("no design of the suite has %s=%s (add one to lockcheck/catalogue or extraDesigns)", axis, w)
			}
		}
	}
	for _, p := range []string{"none", "always", "everysec"} {
		if !have["persistence="+p] {
			t.Errorf("no design of the suite crashes a lock node with persistence %s (persist=0; persist=1; persist=1,fsync=N)", p)
		}
	}
	for _, ki := range kinds {
		if ki.cat == catFault && !faults[ki.kind] {
			t.Errorf("no design of the suite can take the fault %q", ki.kind)
		}
	}
}

// persistence is what a crashed lock node of d keeps: nothing, every
// write (appendfsync always) or the writes up to its last fsync.
func persistence(d model.Design) string {
	switch {
	case d.Persist == 0:
		return "none"
	case d.FsyncTicks == 0:
		return "always"
	}
	return "everysec"
}

// axisValues are a design's axis words, "lock=redis" and so on.
func axisValues(d model.Design) []string {
	return []string{"lock=" + d.Lock.String(), "acquire=" + d.Acquire.String(), "release=" + d.Release.String(),
		"fence=" + d.Fence.String(), "storage=" + d.Storage.String(), "clock=" + d.Clock.String(),
		"quorum=" + d.Quorum.String(), "check=" + d.Check.String(), "wait=" + d.Wait.String(), "tx=" + d.Tx.String(),
		"value=" + d.Value.String(), "ack=" + d.Ack.String(), "level=" + d.Level.String(), "pool=" + d.Pool.String(), "end=" + d.End.String(), "protect=" + d.Protect.String(), "abandon=" + d.Abandon.String(), "behavior=" + d.Behavior.String(), "index=" + d.Index.String(), "fence-check=" + d.FenceCheck.String()}
}

// axisValue is the word of value i of an axis; out of range, it has a "(".
func axisValue(axis string, i int) string {
	switch axis {
	case "lock":
		return model.LockKind(i).String()
	case "acquire":
		return model.AcquireMode(i).String()
	case "release":
		return model.ReleaseMode(i).String()
	case "fence":
		return model.FenceMode(i).String()
	case "storage":
		return model.StorageMode(i).String()
	case "clock":
		return model.ClockMode(i).String()
	case "quorum":
		return model.Quorum(i).String()
	case "check":
		return model.CheckMode(i).String()
	case "wait":
		return model.WaitMode(i).String()
	case "tx":
		return model.TxMode(i).String()
	case "value":
		return model.ValueMode(i).String()
	case "ack":
		return model.AckMode(i).String()
	case "level":
		return model.AdvisoryLevel(i).String()
	case "pool":
		return model.PoolMode(i).String()
	case "end":
		return model.SessionEnd(i).String()
	case "protect":
		return model.Protect(i).String()
	case "abandon":
		return model.AbandonMode(i).String()
	case "behavior":
		return model.ConsulBehavior(i).String()
	case "index":
		return model.ConsulIndex(i).String()
	case "fence-check":
		return model.FenceCheck(i).String()
	}
	panic("unknown axis " + axis)
}

// TestDesignFlag: -properties.design runs the suite on one design of the
// user's, not in the catalogue, and a bad name is a one-line error naming
// what is allowed, with a non-zero exit before any test runs. Both run
// the test binary itself.
func TestDesignFlag(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary")
	}
	const own = "redis/get-del/none/plain,ttl=6,clients=2"
	if slices.Contains(catalogue.Names(), own) {
		t.Fatalf("%s is in the catalogue: pick a design of a user's own", own)
	}
	run := func(design string) (string, string, error) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestDesigns$", "-test.v", "-rapid.checks=20", "-properties.design="+design)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		return out.String(), errb.String(), err
	}
	out, stderr, err := run(own)
	if err != nil {
		t.Fatalf("-properties.design=%s: %v\n%s%s", own, err, out, stderr)
	}
	d, _ := model.ParseDesign(own)
	exp, err := expectationFor(d)
	if err != nil {
		t.Fatal(err)
	}
	subtests := []string{"holds"}
	for _, v := range exp.violated() {
		subtests = append(subtests, v.prop.Name)
	}
	for _, sub := range subtests {
		if want := "--- PASS: TestDesigns/" + own + "/" + sub + " "; !strings.Contains(out, want) {
			t.Errorf("-properties.design=%s: no %q in\n%s", own, want, out)
		}
	}
	if strings.Count(out, "--- PASS: TestDesigns/") != 1+len(subtests) || len(subtests) < 2 {
		t.Errorf("-properties.design=%s: want TestDesigns on that design alone, with a broken property:\n%s", own, out)
	}
	for _, c := range []struct{ design, want string }{
		{"redis/cad/rw/max-tokens", `properties: -properties.design: unknown storage "max-tokens" (did you mean max-token?) (allowed: plain, max-token, max-write, cond-update, cas)`},
		{"redis/cad/rw/max-token,ttl=0", "properties: -properties.design: "},
	} {
		out, stderr, err := run(c.design)
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 {
			t.Errorf("-properties.design=%s: want exit status 2, got %v", c.design, err)
		}
		if !strings.HasPrefix(stderr, c.want) || strings.Count(stderr, "\n") != 1 || out != "" {
			t.Errorf("-properties.design=%s: want one line starting %q on stderr and nothing on stdout; got\nstderr: %q\nstdout: %q", c.design, c.want, stderr, out)
		}
	}
}
