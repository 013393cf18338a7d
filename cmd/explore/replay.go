package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"lockcheck/counterexamples"
)

func init() {
	register("replay", "re-run a counterexample file (does it still show its violation?) or a scenario file (story, timeline, every property) through the model", runReplay)
}

// runReplay exits 0 when the file still shows its violation, 1 when it no
// longer does, 2 when the file cannot be read or parsed.
func runReplay(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("replay", stderr)
	asJSON := fs.Bool("json", false, "print the verdict as one JSON object (bad input too: {\"error\": ...})")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: explore replay [-json] FILE   (a counterexample file, e.g. counterexamples/redis-del-none-plain--own-release.txt, or a scenario file, e.g. model/scenarios/demo2.txt)")
		fmt.Fprintln(fs.Output(), "counterexample: exit 0 it still shows its violation; 1 it no longer does; 2 bad file")
		fmt.Fprintln(fs.Output(), "scenario: the story, timeline, outcome and every property on that schedule; exit 0 its expect lines hold (none: no always-property violated), 1 not, 2 bad file or a step not enabled")
	}
	if code, ok := parseFlagsJSON(fs, args, stdout); !ok {
		return code
	}
	bad := func(msg string) int { return failUsage(stdout, stderr, "replay", *asJSON, msg) }
	if fs.NArg() != 1 {
		return bad("want one counterexample or scenario file")
	}
	name := fs.Arg(0)
	data, err := readLimited(name, counterexamples.MaxFileBytes, "a counterexample or scenario file")
	if err != nil {
		return bad(err.Error())
	}
	if !isCounterexample(data) {
		return replayScenario(name, data, *asJSON, stdout, stderr)
	}
	f, err := counterexamples.Parse(string(data))
	if err != nil {
		var pe *counterexamples.ParseError
		if errors.As(err, &pe) {
			return bad(fmt.Sprintf("%s:%d: %s", name, pe.Line, pe.Msg))
		}
		return bad(fmt.Sprintf("%s: %v", name, err))
	}
	v := f.Replay()
	stale, _ := f.Stale()
	if *asJSON {
		out := replayJSON{File: name, Design: f.Design.Name(), Property: f.Property, Shows: v.Shows, Steps: len(f.Trace), Stale: stale}
		if v.Shows {
			out.Step = &v.Step
		}
		if v.Reason != "" {
			r := withFile(name, v.Reason)
			out.Reason = &r
		}
		if out.Stale == nil {
			out.Stale = []string{}
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(out)
		if !v.Shows {
			return exitViolated
		}
		return exitOK
	}
	if !v.Shows {
		fmt.Fprintf(stdout, "%s: NO LONGER shows its violation: %s, %s\n", name, f.Design.Name(), f.Property)
		fmt.Fprintf(stdout, "  %s\n", withFile(name, v.Reason))
		return exitViolated
	}
	fmt.Fprintf(stdout, "%s: still shows its violation: %s breaks %s at step %d of %d\n", name, f.Design.Name(), f.Property, v.Step, len(f.Trace))
	if v.Reason != "" {
		fmt.Fprintf(stdout, "  note: %s\n", v.Reason)
	}
	if len(stale) > 0 {
		fmt.Fprintf(stdout, "  note: these parts of the file are not what the model writes now: %s (regenerate: %s)\n", strings.Join(stale, ", "), f.Regenerate)
	}
	return exitOK
}

// replayJSON is replay's -json object.
type replayJSON struct {
	File     string   `json:"file"`
	Design   string   `json:"design"`
	Property string   `json:"property"`
	Shows    bool     `json:"shows"`  // the trace still breaks the property
	Step     *int     `json:"step"`   // the step that breaks it; null if none
	Steps    int      `json:"steps"`  // of the trace
	Reason   *string  `json:"reason"` // why not, or a note
	Stale    []string `json:"stale"`  // parts of the file the model writes otherwise now
}

// withFile turns "line N: …" into "FILE:N: …".
func withFile(name, reason string) string {
	rest, ok := strings.CutPrefix(reason, "line ")
	if !ok {
		return reason
	}
	num, msg, ok := strings.Cut(rest, ": ")
	if !ok {
		return reason
	}
	return name + ":" + num + ": " + msg
}

// readLimited reads a regular file of at most limit bytes. Anything else
// (a FIFO, a device, a folder) is refused before it is opened: opening a
// FIFO would wait for a writer for ever.
func readLimited(name string, limit int, want string) ([]byte, error) {
	st, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%s): want %s", clip(name), fileKind(st.Mode()), want)
	}
	fh, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	if st, err := fh.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", clip(name)) // replaced since the first look
	}
	data, err := io.ReadAll(io.LimitReader(fh, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if len(data) > limit {
		return nil, fmt.Errorf("%s: more than %d bytes: too big for %s", name, limit, want)
	}
	return data, nil
}

// fileKind names a non-regular file's type.
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "mode " + m.String()
}
