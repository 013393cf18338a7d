package counterexamples

import (
	"errors"
	"fmt"
	"strings"

	"lockcheck/model"
)

// Verdict is what replaying a file shows.
type Verdict struct {
	Shows  bool // the trace replays and violates the file's property
	Step   int  // the step at which it is violated now (when Shows)
	Reason string
	Run    *model.Run // nil when the trace does not replay
}

// Replay runs the file's trace through model.Replay. Shows is false when
// the trace no longer replays (Reason names the file's line of the first
// step that is not enabled) or replays without violating the property.
func (f *File) Replay() Verdict {
	d := f.Design
	r, err := model.Replay(&d, f.Trace)
	if err != nil {
		var te *model.TraceError
		if errors.As(err, &te) {
			return Verdict{Reason: fmt.Sprintf("line %d: the trace no longer replays: %v", f.StepLine(te.Seq), err)}
		}
		return Verdict{Reason: "the trace no longer replays: " + err.Error()}
	}
	at, ok := r.Violated(f.Property)
	if !ok {
		var shown []string
		for _, v := range r.Found {
			if p, _ := model.PropertyByName(v.Property); p.Expect == model.Always {
				shown = append(shown, fmt.Sprintf("%s at step %d", v.Property, v.Seq))
			}
		}
		also := "no always property is violated"
		if len(shown) > 0 {
			also = "it violates " + strings.Join(shown, ", ")
		}
		return Verdict{Run: r, Reason: fmt.Sprintf("the trace replays (%d steps) but no longer violates %s (%s)", len(f.Trace), f.Property, also)}
	}
	v := Verdict{Shows: true, Step: at, Run: r}
	if f.ViolatedAt != 0 && f.ViolatedAt != at {
		v.Reason = fmt.Sprintf("violated at step %d, the file says step %d", at, f.ViolatedAt)
	}
	return v
}

// Stale compares the file with what it would be if written now from its
// design, property, trace, bounds and commands: the parts that differ
// (header, story, timeline, outcome, linearizability, steps), none when it
// is up to date. It fails when the file could not be written now (its trace
// no longer shows the violation).
func (f *File) Stale() ([]string, error) {
	display := strings.TrimPrefix(f.ReplayCmd, ReplayPrefix)
	if p, ok := shellUnquote(display); ok {
		display = p
	}
	// the clients line and the prevented section come from searches that
	// replay does not repeat (explore regen does): they are kept as written
	r, err := Render(Counterexample{Design: f.Design, Property: f.Property, Trace: f.Trace, Bounds: f.Bounds(), Regenerate: f.Regenerate,
		Clients: f.Clients, Prevented: f.Sections[secPrevented]}, display)
	if err != nil {
		return nil, err
	}
	now, err := Parse(string(r.Text))
	if err != nil {
		return nil, fmt.Errorf("internal error: a rendered file does not parse: %v", err)
	}
	var diff []string
	if headerOf(f.text) != headerOf(string(r.Text)) {
		diff = append(diff, "header")
	}
	for _, s := range readableSections {
		if f.Sections[s] != now.Sections[s] {
			diff = append(diff, s)
		}
	}
	if stepsOf(f.text) != stepsOf(string(r.Text)) {
		diff = append(diff, secSteps)
	}
	return diff, nil
}

// headerOf is the text before the first section line.
func headerOf(text string) string {
	var b strings.Builder
	for _, l := range strings.Split(text, "\n") {
		if _, ok := sectionName(l); ok {
			break
		}
		b.WriteString(strings.TrimRight(l, "\r") + "\n")
	}
	return b.String()
}

// stepsOf is the text from the steps section line on.
func stepsOf(text string) string {
	var b strings.Builder
	in := false
	for _, l := range strings.Split(text, "\n") {
		if name, ok := sectionName(l); ok && name == secSteps {
			in = true
		}
		if in {
			b.WriteString(strings.TrimRight(l, "\r") + "\n")
		}
	}
	return b.String()
}
