// Package counterexamples is the file format of one counterexample (a
// design, the property it breaks, and the shortest trace that shows it),
// the catalogue of designs whose counterexamples are checked in beside this
// file, and the code that writes, parses back and replays them.
//
// A file is plain text, readable first: a header whose first line is the
// cause in one sentence, why (which faults the violation needs), the story
// step by step, the seed's timeline, the outcome, the linearizability
// verdict and, for the catalogue, what would have prevented it (the
// nearest designs on which the property holds, from explore.Fix). The
// trace itself is the last section, in the scenario-file vocabulary of
// model.ParseScenario, so that `explore replay FILE` can run it again:
//
//	lockcheck counterexample
//	cause:        A paused for 10 ticks at t=1: A's key expired at t=11 …
//	design:       redis/cad/none/plain,clients=1
//	property:     exclusive: no client reads or writes storage while …
//	violated at:  step 13 of 13, t=11
//	found by:     breadth-first search, shortest, within bounds: …
//	clients:      1 client, the fewest that show it (…)
//	regenerate:   go run ./cmd/explore regen
//	replay:       go run ./cmd/explore replay counterexamples/….txt
//
//	--- why ---
//	faults in this trace (…):
//	  step 4, t=1: A pause 10 (necessary: …)
//	--- story ---
//	t=1 A: SET lock:order-42 A:7c2e NX PX 10000 → OK
//	…
//	--- prevented ---
//	…
//	--- steps (scenario syntax, read back by explore replay) ---
//	design redis/cad/none/plain,clients=1
//	A acquire
//	tick 9
//	…
//	--- end ---
//
// Only the header and the steps section are read back; the readable
// sections are compared with what the model tells now (File.Stale), except
// the clients line and the prevented section, which come from searches that
// only explore regen repeats.
package counterexamples

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"lockcheck/model"
)

const (
	// Magic is the first line of every counterexample file.
	Magic = "lockcheck counterexample"
	// FoundByPrefix starts the "found by" header value; the bounds follow.
	FoundByPrefix = "breadth-first search, shortest, within bounds: "

	stepsTitle = "steps (scenario syntax, read back by explore replay)"
	// maxSteps bounds a trace, so that a hostile file cannot make the parser
	// allocate without limit.
	maxSteps = 100000
	// MaxFileBytes is the largest file Parse reads.
	MaxFileBytes = 4 << 20
)

// Header keys, in the order they are written.
const (
	keyCause      = "cause"
	keyDesign     = "design"
	keyPreset     = "preset"
	keyProperty   = "property"
	keyViolatedAt = "violated at"
	keyFoundBy    = "found by"
	keyClients    = "clients"
	keyRegenerate = "regenerate"
	keyReplay     = "replay"
)

var headerKeys = []string{keyCause, keyDesign, keyPreset, keyProperty, keyViolatedAt, keyFoundBy, keyClients, keyRegenerate, keyReplay}

// Readable sections, in the order they are written. The steps section
// follows them, then the end line.
const (
	secWhy             = "why"
	secStory           = "story"
	secTimeline        = "timeline"
	secOutcome         = "outcome"
	secLinearizability = "linearizability"
	secPrevented       = "prevented"
	secSteps           = "steps"
	secEnd             = "end"
)

var readableSections = []string{secWhy, secStory, secTimeline, secOutcome, secLinearizability, secPrevented}

// File is a parsed counterexample file.
type File struct {
	Design   model.Design
	Property string // an Always property's name
	// ViolatedAt is the step the header says the property is violated at
	// (0 if the header has no "violated at" line); Steps is the trace length
	// it states, checked against the trace (a truncated file fails).
	ViolatedAt int
	FoundBy    string // the "found by" value (FoundByPrefix + bounds)
	Cause      string // the one-sentence cause ("" if the header has none)
	Clients    string // the clients line: whether fewer clients show it ("" none)
	Regenerate string // the command that regenerates the file
	ReplayCmd  string // the command that replays it
	Trace      []model.Action
	// Sections holds each readable section's text as written, by name
	// (story, timeline, outcome, linearizability).
	Sections map[string]string

	text      string
	stepLines []int // stepLines[k] is the file line of step k+1
}

// ParseError is a file that cannot be read: the line and what was wrong.
type ParseError struct {
	Line int
	Msg  string
}

func (e *ParseError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

func errAt(line int, format string, args ...any) error {
	return &ParseError{Line: line, Msg: fmt.Sprintf(format, args...)}
}

// Bounds is the part after FoundByPrefix of the found-by line ("" if the
// line is missing or written otherwise).
func (f *File) Bounds() string {
	b, ok := strings.CutPrefix(f.FoundBy, FoundByPrefix)
	if !ok {
		return ""
	}
	return b
}

// StepLine is the file line that holds step seq (1-based), or 0.
func (f *File) StepLine(seq int) int {
	if seq < 1 || seq > len(f.stepLines) {
		return 0
	}
	return f.stepLines[seq-1]
}

// Parse reads a counterexample file. A corrupt or hand-edited file gives a
// *ParseError naming the line; Parse never panics. It checks the form only:
// whether the trace still replays and shows its violation is Replay's job.
func Parse(text string) (*File, error) {
	f, err := parse(text)
	var pe *ParseError
	if err != nil && text != "" && !strings.HasSuffix(text, "\n") && errors.As(err, &pe) &&
		pe.Line == strings.Count(text, "\n")+1 && !strings.HasPrefix(pe.Msg, "the file ends") {
		// the error is on the last line, which has no newline: every file
		// written ends with one, so the line was cut (a design line cut
		// to "plai" is a truncation, not an unknown storage)
		pe.Msg = "the file ends inside this line (no final newline: truncated?): " + pe.Msg
	}
	return f, err
}

func parse(text string) (*File, error) {
	if len(text) > MaxFileBytes {
		return nil, errAt(1, "file is %d bytes, more than the %d a counterexample may have", len(text), MaxFileBytes)
	}
	lines := strings.Split(text, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1] // the final newline
	}
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], "\r")
	}
	if len(lines) == 0 || strings.TrimSpace(lines[0]) == "" {
		return nil, errAt(1, "empty first line (want %q)", Magic)
	}
	if strings.TrimSpace(lines[0]) != Magic {
		return nil, errAt(1, "%q is not a counterexample file's first line (want %q)", clip(lines[0]), Magic)
	}
	f := &File{Sections: map[string]string{}, text: text}

	// header: key: value lines up to the first section line
	n := 1
	seen := map[string]int{}
	var designLine, propertyLine, violatedLine, stepsLine, presetLine int
	var preset string
	for ; n < len(lines); n++ {
		line := lines[n]
		lineNo := n + 1
		if _, ok := sectionName(line); ok {
			break
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || !knownKey(k) {
			return nil, errAt(lineNo, "%q: want a header line \"key: value\" (keys: %s) or a section line \"--- name ---\"", clip(line), strings.Join(headerKeys, ", "))
		}
		if prev, dup := seen[k]; dup {
			return nil, errAt(lineNo, "second %q line (the first is line %d)", k, prev)
		}
		seen[k] = lineNo
		switch k {
		case keyDesign:
			d, err := model.ParseDesign(v)
			if err != nil {
				return nil, errAt(lineNo, "%v", err)
			}
			f.Design, designLine = d, lineNo
		case keyPreset:
			preset, presetLine = v, lineNo
		case keyProperty:
			name, _, _ := strings.Cut(v, ":")
			name = strings.TrimSpace(name)
			p, ok := model.PropertyByName(name)
			if !ok || p.Expect != model.Always {
				return nil, errAt(lineNo, "property %q: want an always property (%s)", clip(name), strings.Join(alwaysNames(), ", "))
			}
			f.Property, propertyLine = name, lineNo
		case keyViolatedAt:
			at, steps, err := parseViolatedAt(v)
			if err != nil {
				return nil, errAt(lineNo, "violated at %q: %v", clip(v), err)
			}
			f.ViolatedAt, violatedLine, stepsLine = at, lineNo, steps
		case keyFoundBy:
			f.FoundBy = v
		case keyCause:
			f.Cause = v
		case keyClients:
			f.Clients = v
		case keyRegenerate:
			f.Regenerate = v
		case keyReplay:
			f.ReplayCmd = v
		}
	}
	if designLine == 0 {
		return nil, errAt(n+1, "the header has no design line (want \"design: NAME\" before the first section)")
	}
	if propertyLine == 0 {
		return nil, errAt(n+1, "the header has no property line (want \"property: NAME\" before the first section)")
	}
	if presetLine != 0 {
		name, _, _ := strings.Cut(preset, " ")
		pd, err := model.ParseDesign(name)
		if !isPreset(name) || err != nil {
			return nil, errAt(presetLine, "preset %q: not a preset (presets: %s)", clip(name), strings.Join(model.PresetNames(), ", "))
		}
		if pd != f.Design {
			return nil, errAt(presetLine, "preset %s is %s, not the design %s of line %d", name, pd.Name(), f.Design.Name(), designLine)
		}
	}

	// sections
	if n >= len(lines) {
		return nil, errAt(n+1, "the file ends after the header: no steps section (truncated?)")
	}
	order := 0 // index into readableSections of the next allowed section
	for n < len(lines) {
		name, _ := sectionName(lines[n])
		lineNo := n + 1
		switch {
		case name == secSteps:
			end, err := f.parseSteps(lines, n+1, designLine)
			if err != nil {
				return nil, err
			}
			if violatedLine != 0 && stepsLine != len(f.Trace) {
				return nil, errAt(violatedLine, "the header says %d steps, but the steps section has %d (truncated or edited?)", stepsLine, len(f.Trace))
			}
			if violatedLine != 0 && f.ViolatedAt > len(f.Trace) {
				return nil, errAt(violatedLine, "violated at step %d, but the trace has %d steps", f.ViolatedAt, len(f.Trace))
			}
			for k := end + 1; k < len(lines); k++ {
				if strings.TrimSpace(lines[k]) != "" {
					return nil, errAt(k+1, "%q after the end line (the end line closes the file)", clip(lines[k]))
				}
			}
			return f, nil
		case name == secEnd:
			return nil, errAt(lineNo, "end line before the steps section (want \"--- %s ---\" first)", stepsTitle)
		default:
			idx := indexOf(readableSections, name)
			if idx < 0 {
				return nil, errAt(lineNo, "unknown section %q (sections: %s, %s, then end)", clip(name), strings.Join(readableSections, ", "), secSteps)
			}
			if idx < order {
				return nil, errAt(lineNo, "section %q out of place or repeated (order: %s, %s)", name, strings.Join(readableSections, ", "), secSteps)
			}
			order = idx + 1
			k := n + 1
			for k < len(lines) {
				if _, ok := sectionName(lines[k]); ok {
					break
				}
				k++
			}
			f.Sections[name] = strings.Join(lines[n+1:k], "\n")
			n = k
			if n >= len(lines) {
				return nil, errAt(n+1, "the file ends inside the %s section: no steps section (truncated?)", name)
			}
		}
	}
	return nil, errAt(len(lines)+1, "no steps section") // not reached
}

// parseSteps reads the steps section from lines[from:], up to its end line,
// and returns the index of the end line.
func (f *File) parseSteps(lines []string, from, designLine int) (int, error) {
	haveDesign := false
	for n := from; n < len(lines); n++ {
		lineNo := n + 1
		if name, ok := sectionName(lines[n]); ok {
			if name != secEnd {
				return 0, errAt(lineNo, "section %q after the steps section (want \"--- end ---\")", clip(name))
			}
			if !haveDesign {
				return 0, errAt(lineNo, "the steps section has no design line (want \"design NAME\" first)")
			}
			return n, nil
		}
		line := lines[n]
		if c := strings.Index(line, "#"); c >= 0 {
			line = line[:c]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "design "); ok {
			if haveDesign {
				return 0, errAt(lineNo, "a second design line in the steps section")
			}
			d, err := model.ParseDesign(rest)
			if err != nil {
				return 0, errAt(lineNo, "%v", err)
			}
			if d != f.Design {
				return 0, errAt(lineNo, "design %s, but the header (line %d) says %s", d.Name(), designLine, f.Design.Name())
			}
			haveDesign = true
			continue
		}
		if !haveDesign {
			return 0, errAt(lineNo, "%q before the steps section's design line (want \"design NAME\" first)", clip(line))
		}
		a, count, err := model.ParseStep(&f.Design, line)
		if err != nil {
			return 0, errAt(lineNo, "%v", err)
		}
		if len(f.Trace)+count > maxSteps {
			return 0, errAt(lineNo, "more than %d steps", maxSteps)
		}
		for ; count > 0; count-- {
			f.Trace = append(f.Trace, a)
			f.stepLines = append(f.stepLines, lineNo)
		}
	}
	return 0, errAt(len(lines)+1, "the file ends inside the steps section: no \"--- end ---\" line (truncated?)")
}

// sectionName recognises "--- name … ---" and returns name.
func sectionName(line string) (string, bool) {
	s := strings.TrimSpace(line)
	if len(s) < 9 || !strings.HasPrefix(s, "--- ") || !strings.HasSuffix(s, " ---") {
		return "", false
	}
	inner := strings.TrimSpace(s[4 : len(s)-4])
	name, _, _ := strings.Cut(inner, " ")
	return name, name != ""
}

// parseViolatedAt reads "step N of M[, …]".
func parseViolatedAt(v string) (at, steps int, err error) {
	head, _, _ := strings.Cut(v, ",")
	f := strings.Fields(head)
	if len(f) != 4 || f[0] != "step" || f[2] != "of" {
		return 0, 0, fmt.Errorf("want \"step N of M\"")
	}
	at, err1 := strconv.Atoi(f[1])
	steps, err2 := strconv.Atoi(f[3])
	if err1 != nil || err2 != nil || at < 0 || steps < 0 || steps > maxSteps || at > steps {
		return 0, 0, fmt.Errorf("want \"step N of M\" with 0 ≤ N ≤ M ≤ %d", maxSteps)
	}
	return at, steps, nil
}

func knownKey(k string) bool { return indexOf(headerKeys, k) >= 0 }

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

func isPreset(name string) bool { return indexOf(model.PresetNames(), name) >= 0 }

func alwaysNames() []string {
	var names []string
	for _, p := range model.Properties {
		if p.Expect == model.Always {
			names = append(names, p.Name)
		}
	}
	return names
}

// clip keeps error messages one short line whatever the input.
func clip(s string) string {
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}
