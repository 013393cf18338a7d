package counterexamples

import (
	"fmt"
	"path"
	"strings"

	"lockcheck/explore"
	"lockcheck/model"
	"lockcheck/webview"
)

// Counterexample is what a file is made from: a design, the Always
// property a trace violates, the bounds of the search that found it, and
// the command that regenerates the file.
type Counterexample struct {
	Design     model.Design
	Property   string
	Trace      []model.Action
	Bounds     string // what BoundsText says, or the caller's own words
	Regenerate string // "" = explore check -design NAME -out DIR
	// FoundBy says how the trace was found, when not by breadth-first
	// search (which makes it a shortest one): e.g. rapid's shrinker.
	FoundBy string
	// Base is the file name without extension ("" = FileBase(Design,
	// Property)): the catalogue keeps its design's name when the trace
	// shows the violation with fewer clients.
	Base string
	// Clients says whether fewer clients show the violation ("" = not
	// asked); it becomes the header's clients line.
	Clients string
	// Prevented is the "what would have prevented this" section ("" =
	// none): the nearest designs on which the property holds (explore.Fix).
	Prevented string
}

// Rendered is one counterexample's files, as bytes.
type Rendered struct {
	Base      string // file name without extension: FileBase(design, property)
	Text      []byte // the .txt file
	HTML      []byte // the .html timeline page
	Porcupine []byte // porcupine's page for the history (nil: not available)
	Run       *model.Run
	Trace     []model.Action // the trace with its clients renamed
}

// FileBase is the file name, without extension, of the counterexample of
// property in design d: the canonical design name made filesystem-safe
// ("/" → "-", "," → "_", "=" → "-"), two dashes, the property.
// redis/del/none/plain and own-release give redis-del-none-plain--own-release.
func FileBase(d model.Design, property string) string {
	return safeName(d.Name()) + "--" + safeName(property)
}

func safeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '.':
			b.WriteRune(r)
		case r >= 'A' && r <= 'Z':
			b.WriteRune(r - 'A' + 'a')
		case r == ',':
			b.WriteByte('_')
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}

// BoundsText describes the bounds of a search of d for a found-by line:
// the step limit, the horizon, the fault budget and symmetry.
func BoundsText(d model.Design, b explore.Bounds) string {
	steps := "steps unlimited"
	if b.MaxSteps > 0 {
		steps = fmt.Sprintf("at most %d steps", b.MaxSteps)
	}
	states := ""
	if b.MaxStates > 0 {
		states = fmt.Sprintf(", at most %d states", b.MaxStates)
	}
	sym := "off"
	if b.Symmetry {
		sym = "on"
	}
	return fmt.Sprintf("%s%s, horizon %d ticks, %s, fault budget: %s; symmetry %s",
		steps, states, d.HorizonTicks, model.ClientsText(&d), model.BudgetText(&d), sym)
}

func plural(n int, one, many string) string {
	switch n {
	case 0:
		return "no " + many
	case 1:
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// trimLines removes trailing spaces from every line (the timeline pads its
// columns), so that an editor that strips them leaves the file unchanged.
func trimLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// Rename renames the clients of trace A, B, C, … in order of their first
// appearance; clients that never appear take the remaining letters in
// order. All clients run the same program, so the renamed trace replays to
// the same story with other names, and equivalent counterexamples read the
// same.
func Rename(trace []model.Action, clients int) []model.Action {
	var perm [model.MaxClients]int // perm[old] = new, -1 unassigned
	for i := range perm {
		perm[i] = -1
	}
	next := 0
	for _, a := range trace {
		if a.Kind.ByClient() && int(a.Client) < len(perm) && perm[a.Client] < 0 {
			perm[a.Client] = next
			next++
		}
	}
	for i := 0; i < clients && i < len(perm); i++ {
		if perm[i] < 0 {
			perm[i] = next
			next++
		}
	}
	out := make([]model.Action, len(trace))
	for k, a := range trace {
		if a.Kind.ByClient() && int(a.Client) < len(perm) && perm[a.Client] >= 0 {
			a.Client = uint8(perm[a.Client])
		}
		out[k] = a
	}
	return out
}

// ReplayPrefix begins a file's replay: line; the file's path follows,
// quoted for a shell (ShellQuote).
const ReplayPrefix = "go run ./cmd/explore replay "

// Render makes a counterexample's files. displayPath is the .txt file's
// path as the replay command shows it (e.g. counterexamples/x.txt), quoted
// there for a shell (ShellQuote) as is the regenerate command's folder. The
// clients are renamed (Rename); the renamed trace is replayed and must
// violate the property at the same step as the trace given, or Render
// fails.
func Render(cx Counterexample, displayPath string) (*Rendered, error) {
	d := cx.Design
	if err := d.Validate(); err != nil {
		return nil, err
	}
	p, ok := model.PropertyByName(cx.Property)
	if !ok || p.Expect != model.Always {
		return nil, fmt.Errorf("property %q: want an always property (%s)", clip(cx.Property), strings.Join(alwaysNames(), ", "))
	}
	orig, err := model.Replay(&d, cx.Trace)
	if err != nil {
		return nil, fmt.Errorf("%s, %s: the trace does not replay: %v", d.Name(), cx.Property, err)
	}
	origAt, ok := orig.Violated(cx.Property)
	if !ok {
		return nil, fmt.Errorf("%s: the trace does not violate %s", d.Name(), cx.Property)
	}
	trace := cx.Trace
	if model.NamesInterchangeable(&d) { // a lease's candidate B is B by its name
		trace = Rename(cx.Trace, d.Clients)
	}
	run, err := model.Replay(&d, trace)
	if err != nil {
		return nil, fmt.Errorf("%s, %s: the trace with clients renamed does not replay (is the model symmetric?): %v", d.Name(), cx.Property, err)
	}
	at, ok := run.Violated(cx.Property)
	if !ok || at != origAt {
		return nil, fmt.Errorf("%s, %s: renaming the clients changed the verdict (step %d, now %d, shown %v): is the model symmetric?", d.Name(), cx.Property, origAt, at, ok)
	}
	regen := cx.Regenerate
	if regen == "" {
		regen = fmt.Sprintf("go run ./cmd/explore check -design %s -out %s", d.Name(), ShellQuote(path.Dir(displayPath)))
	}
	lin := checkLinearizability(run)
	base := cx.Base
	if base == "" {
		base = FileBase(d, cx.Property)
	}
	faults := Faults(d, trace, cx.Property)
	cause := Cause(run, cx.Property, at, faults)

	var b strings.Builder
	b.WriteString(Magic + "\n")
	header := func(k, v string) { fmt.Fprintf(&b, "%-13s %s\n", k+":", v) }
	header(keyCause, cause)
	header(keyDesign, d.Name())
	if name, title := presetOf(d); name != "" {
		header(keyPreset, fmt.Sprintf("%s (%s)", name, title))
	}
	header(keyProperty, p.Name+": "+p.Doc)
	header(keyViolatedAt, fmt.Sprintf("step %d of %d, t=%d", at, len(trace), tickAt(run, at)))
	foundBy := FoundByPrefix + cx.Bounds
	if cx.FoundBy != "" {
		foundBy = cx.FoundBy
	}
	header(keyFoundBy, foundBy)
	if cx.Clients != "" {
		header(keyClients, cx.Clients)
	}
	header(keyRegenerate, regen)
	header(keyReplay, ReplayPrefix+ShellQuote(displayPath))
	section := func(name, body string) {
		fmt.Fprintf(&b, "\n--- %s ---\n%s", name, trimLines(body))
	}
	section(secWhy, whyText(faults))
	section(secStory, model.RenderSteps(run))
	section(secTimeline, model.RenderTimeline(run))
	section(secOutcome, model.RenderSummary(run))
	section(secLinearizability, lin.Text)
	if cx.Prevented != "" {
		section(secPrevented, cx.Prevented)
	}
	section(stepsTitle, "design "+d.Name()+"\n"+formatSteps(run, cx.Property, at))
	b.WriteString("--- end ---\n")

	page := webview.Page(run, webview.Info{
		Title:         fmt.Sprintf("%s breaks %s", d.Name(), p.Name),
		Design:        d.Name(),
		Preset:        presetLabel(d),
		Property:      p.Name,
		PropertyDoc:   p.Doc,
		ViolatedAt:    at,
		FoundBy:       foundBy,
		Linearizable:  lin.Text,
		TextFile:      base + ".txt",
		PorcupineFile: porcupineName(base, lin.HTML),
		Cause:         cause,
		Prevented:     cx.Prevented,
	})
	return &Rendered{Base: base, Text: []byte(b.String()), HTML: page, Porcupine: lin.HTML, Run: run, Trace: trace}, nil
}

func porcupineName(base string, html []byte) string {
	if html == nil {
		return ""
	}
	return base + "-porcupine.html"
}

// tickAt is the tick at which step seq happened (0: the start).
func tickAt(r *model.Run, seq int) int {
	if seq < 1 || seq > len(r.Steps) {
		return int(r.Init.Now)
	}
	return int(r.Steps[seq-1].Event.Now)
}

// formatSteps writes the trace in scenario syntax, runs of ticks as
// "tick N # t=…", the violating step marked.
func formatSteps(r *model.Run, property string, at int) string {
	var b strings.Builder
	line := func(s, note string) {
		if note == "" {
			b.WriteString(s + "\n")
			return
		}
		fmt.Fprintf(&b, "%-16s # %s\n", s, note)
	}
	mark := fmt.Sprintf("✗ %s violated here (step %d)", property, at)
	for k := 0; k < len(r.Steps); {
		st := &r.Steps[k]
		if st.Action.Kind == model.ActTick {
			n := 0
			for k < len(r.Steps) && r.Steps[k].Action.Kind == model.ActTick {
				n++
				k++
				if k == at { // the violation ends the run of ticks
					break
				}
			}
			note := fmt.Sprintf("t=%d", r.Steps[k-1].Event.Now)
			if k == at {
				note += "  " + mark
			}
			if n == 1 {
				line("tick", note)
			} else {
				line(fmt.Sprintf("tick %d", n), note)
			}
			continue
		}
		k++
		note := ""
		if k == at {
			note = mark
		}
		line(st.Action.String(), note)
	}
	return b.String()
}

// presetOf is the preset whose design is d, with its title, or "".
func presetOf(d model.Design) (name, title string) {
	for _, n := range model.PresetNames() {
		pd, err := model.ParseDesign(n)
		if err != nil || pd != d {
			continue
		}
		dm, err := model.LoadDemo(n)
		if err != nil {
			return n, n
		}
		return n, strings.TrimSuffix(dm.Title, ".")
	}
	return "", ""
}

func presetLabel(d model.Design) string {
	name, title := presetOf(d)
	if name == "" {
		return ""
	}
	return name + " (" + title + ")"
}

// whyText lists the trace's faults and whether the violation needs each.
func whyText(faults []FaultRole) string {
	if len(faults) == 0 {
		return "no fault in this trace: the design breaks the property on its own\n"
	}
	var b strings.Builder
	b.WriteString("faults in this trace (each dropped in turn, the rest replayed and played to its end):\n")
	for _, f := range faults {
		verdict := "necessary: without it the violation does not happen"
		if !f.Necessary {
			verdict = "not needed alone: without it the violation still happens"
		}
		fmt.Fprintf(&b, "  step %d, t=%d: %s (%s)\n", f.Seq, f.Tick, f.Action, verdict)
	}
	return b.String()
}
