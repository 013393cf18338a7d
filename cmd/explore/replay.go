package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"lockcheck/counterexamples"
)

func init() {
	register("replay", "re-run a counterexample file through the model: does it still show its violation?", runReplay)
}

// runReplay exits 0 when the file still shows its violation, 1 when it no
// longer does, 2 when the file cannot be read or parsed.
func runReplay(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("replay", stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: explore replay FILE   (a counterexample file, e.g. counterexamples/redis-del-none-plain--own-release.txt)")
		fmt.Fprintln(stderr, "exit 0: it still shows its violation; 1: it no longer does; 2: bad file")
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "explore replay: want one counterexample file")
		return exitUsage
	}
	name := fs.Arg(0)
	data, err := readLimited(name, counterexamples.MaxFileBytes)
	if err != nil {
		fmt.Fprintln(stderr, "explore replay:", err)
		return exitUsage
	}
	f, err := counterexamples.Parse(string(data))
	if err != nil {
		var pe *counterexamples.ParseError
		if errors.As(err, &pe) {
			fmt.Fprintf(stderr, "explore replay: %s:%d: %s\n", name, pe.Line, pe.Msg)
		} else {
			fmt.Fprintf(stderr, "explore replay: %s: %v\n", name, err)
		}
		return exitUsage
	}
	v := f.Replay()
	if !v.Shows {
		fmt.Fprintf(stdout, "%s: NO LONGER shows its violation: %s, %s\n", name, f.Design.Name(), f.Property)
		fmt.Fprintf(stdout, "  %s\n", withFile(name, v.Reason))
		return exitViolated
	}
	fmt.Fprintf(stdout, "%s: still shows its violation: %s breaks %s at step %d of %d\n", name, f.Design.Name(), f.Property, v.Step, len(f.Trace))
	if v.Reason != "" {
		fmt.Fprintf(stdout, "  note: %s\n", v.Reason)
	}
	if stale, err := f.Stale(); err == nil && len(stale) > 0 {
		fmt.Fprintf(stdout, "  note: these parts of the file are not what the model writes now: %s (regenerate: %s)\n", strings.Join(stale, ", "), f.Regenerate)
	}
	return exitOK
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
func readLimited(name string, limit int) ([]byte, error) {
	st, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%s): want a counterexample or scenario file", clip(name), fileKind(st.Mode()))
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
		return nil, fmt.Errorf("%s: more than %d bytes: not a counterexample file", name, limit)
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
