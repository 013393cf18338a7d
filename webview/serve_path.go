package webview

import (
	"fmt"
	"strings"

	"lockcheck/model"
)

// serve_path.go reads and writes the explorer's URL paths. A page's path
// names the design and the schedule so far, so that a link reproduces it:
//
//	/explore/redis/cad/none/plain,ttl=5/-/A_acquire/B_acquire/tick_9/A_pause_14
//
// The design's name as ParseDesign reads it, a "-" segment, then one
// segment per line of the scenario format (model.FormatTrace: the words of
// Action.String, "tick_9" for nine ticks, "B_acquire_x5" for a run) with
// "_" for each space. The query's at=K puts the page at step K of the
// schedule (back and forward move it; the steps after it are the forward
// part); without it the page is at the end.

// ExplorePrefix starts every explorer page's path.
const ExplorePrefix = "/explore/"

// maxPathBytes bounds a URL path the parser reads (about 100,000 steps).
const maxPathBytes = 2 << 20

// Schedule is a design and a schedule of steps, as an explorer URL path
// names them.
type Schedule struct {
	DesignName string // as written in the path ("demo2" stays demo2)
	Design     model.Design
	Trace      []model.Action
}

// ParseSchedulePath reads the part of an explorer path after its prefix
// (ExplorePrefix, or another view's: "/search/", "/scenario/"):
// "DESIGN/-/STEP/STEP/…", or just "DESIGN" for an empty schedule. Errors
// are one line naming what was wrong; it never panics. Whether the steps
// are enabled one after another is Replay's to say.
func ParseSchedulePath(p string) (*Schedule, error) {
	if len(p) > maxPathBytes {
		return nil, fmt.Errorf("the URL path is %d bytes, more than %d", len(p), maxPathBytes)
	}
	if p == "-" || strings.HasPrefix(p, "-/") {
		p = "/" + p
	}
	name, steps, _ := strings.Cut(p, "/-/")
	name = strings.TrimSuffix(name, "/-")
	name = strings.TrimSuffix(name, "/")
	if name == "" {
		return nil, fmt.Errorf("no design in the URL path (want %sDESIGN/-/STEP/STEP/…, e.g. %sdemo2/-/A_acquire)", ExplorePrefix, ExplorePrefix)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("/,=.-", r)) {
			return nil, fmt.Errorf("design %q: %q is not a character of a design name (a-z, 0-9, / , = . -)", clip(name), r)
		}
	}
	d, err := model.ParseDesign(name)
	if err != nil {
		return nil, err // it names the design
	}
	sc := &Schedule{DesignName: name, Design: d}
	steps = strings.TrimSuffix(steps, "/")
	if steps == "" {
		return sc, nil
	}
	items := strings.Split(steps, "/")
	var lines strings.Builder
	lines.WriteString("design " + name + "\n")
	for k, it := range items {
		if it == "" {
			return nil, fmt.Errorf("step %d of the URL path is empty (want one step a segment, e.g. A_acquire or tick_9)", k+1)
		}
		for _, r := range it {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
				return nil, fmt.Errorf("step %d of the URL path, %q: %q is not a character of a step (letters, digits, _ for a space, -)", k+1, clip(it), r)
			}
		}
		line := strings.ReplaceAll(it, "_", " ")
		if f := strings.Fields(line); len(f) == 0 || f[0] == "design" || f[0] == "expect" {
			return nil, fmt.Errorf("step %d of the URL path, %q, is not a step (want an action's words with _ for a space: A_acquire, B_pause_14, tick_9)", k+1, clip(it))
		}
		lines.WriteString(line + "\n")
	}
	// one step-line parser: the scenario format's
	parsed, err := model.ParseScenario(lines.String())
	if err != nil {
		msg := err.Error()
		var line int
		if n, _ := fmt.Sscanf(msg, "line %d: ", &line); n == 1 && line >= 2 && line-2 < len(items) {
			_, rest, _ := strings.Cut(msg, ": ")
			return nil, fmt.Errorf("step %d of the URL path, %q: %s", line-1, clip(items[line-2]), rest)
		}
		return nil, fmt.Errorf("the URL path's steps: %s", msg)
	}
	sc.Trace = parsed.Trace
	return sc, nil
}

// SchedulePath is the path of a schedule after a view's prefix: the
// inverse of ParseSchedulePath.
func SchedulePath(designName string, trace []model.Action) string {
	var b strings.Builder
	b.WriteString(designName)
	if len(trace) == 0 {
		return b.String()
	}
	b.WriteString("/-")
	for _, line := range strings.Split(strings.TrimSuffix(model.FormatTrace(trace), "\n"), "\n") {
		b.WriteString("/")
		b.WriteString(strings.ReplaceAll(line, " ", "_"))
	}
	return b.String()
}

func clip(s string) string {
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}
