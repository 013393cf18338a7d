// Command explore checks distributed-lock designs: exhaustive search up to N
// steps, the seed's demos, and the counterexample files.
//
//	explore check -design redis/cad/none/plain    search, print verdicts
//	explore demo 2                                 tell a demo's story
//	explore designs                                list every axis and value
//
// Exit codes: 0 all hold within bounds, 1 a property is violated, 2 bad
// input, 3 incomplete, 4 all hold but some only vacuously, 5 none violated
// in a -bitstate search (probable, not a proof).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"unicode/utf8"

	"lockcheck/internal/didyoumean"
)

// Exit codes shared by every subcommand.
const (
	exitOK         = 0
	exitViolated   = 1
	exitUsage      = 2
	exitIncomplete = 3
	exitVacuous    = 4 // every always-property holds, some only vacuously
	exitProbable   = 5 // no violation in a bitstate search: probable, not a proof
)

// command is one subcommand. Each lives in its own file and registers
// itself in init, so that files can be added without touching this one.
type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

var commands = map[string]command{}

func register(name, summary string, run func(args []string, stdout, stderr io.Writer) int) {
	if _, dup := commands[name]; dup {
		panic("explore: command registered twice: " + name)
	}
	commands[name] = command{summary, run}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		// no command is bad input: the usage goes where errors go
		usage(stderr)
		return exitUsage
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		w := &checkedWriter{w: stdout}
		usage(w)
		if w.err != nil {
			fmt.Fprintf(stderr, "explore: writing the usage: %v\n", w.err)
			return exitUsage
		}
		return exitOK
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "explore: unknown command %q%s (commands: %s)\n", clip(args[0]), didyoumean.Hint(args[0], commandNames()), strings.Join(commandNames(), ", "))
		return exitUsage
	}
	w := &checkedWriter{w: stdout}
	code := c.run(args[1:], w, clipWriter{stderr})
	if w.err != nil {
		// output lost (a full disk, a closed pipe): not a verdict to trust
		fmt.Fprintf(stderr, "explore %s: writing the output: %v\n", args[0], w.err)
		return exitUsage
	}
	return code
}

// checkedWriter remembers the first failed write, so that a lost output
// turns into exit 2 whatever the command printed with.
type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	c.err = err
	return n, err
}

// maxWord is the longest word (a run of non-space bytes) that a line on
// stderr or an {"error"} object carries whole.
const maxWord = 200

// clipWriter shortens the long words of what it writes (clipWords): a
// 100 KB path named in an error, by us and again by the OS error we quote,
// must not come back as a 200 KB line. Each Write is one message or line
// (fmt.Fprint*), so a word is not split across two Writes.
type clipWriter struct{ w io.Writer }

func (c clipWriter) Write(p []byte) (int, error) {
	s := string(p)
	if t := clipWords(s); t != s {
		if _, err := io.WriteString(c.w, t); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return c.w.Write(p)
}

// clipWords keeps the first 100 and last 40 bytes (whole characters) of
// each word longer than maxWord, with "…(N bytes)…" between them.
func clipWords(s string) string {
	long := false
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r' {
			n = 0
		} else if n++; n > maxWord {
			long = true
			break
		}
	}
	if !long {
		return s
	}
	var b strings.Builder
	start := -1
	flush := func(end int) {
		w := s[start:end]
		if len(w) > maxWord {
			head, tail := 100, len(w)-40
			for head > 0 && !utf8.RuneStart(w[head]) {
				head--
			}
			for tail < len(w) && !utf8.RuneStart(w[tail]) {
				tail++
			}
			w = fmt.Sprintf("%s…(%d bytes)…%s", w[:head], tail-head, w[tail:])
		}
		b.WriteString(w)
		start = -1
	}
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r' {
			if start >= 0 {
				flush(i)
			}
			b.WriteByte(s[i])
		} else if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		flush(len(s))
	}
	return b.String()
}

// outputLost reports whether a write to the command's stdout (run's
// checkedWriter) has failed: run then reports it, and the command need not.
func outputLost(stdout io.Writer) bool {
	c, ok := stdout.(*checkedWriter)
	return ok && c.err != nil
}

func commandNames() []string {
	var names []string
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: explore <command> [flags]")
	fmt.Fprintln(w)
	for _, n := range commandNames() {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'explore <command> -h' for a command's flags.")
	fmt.Fprintln(w, "Exit codes: 0 all hold within bounds, 1 violated, 2 bad input, 3 incomplete, 4 all hold but some only vacuously, 5 none violated in a -bitstate search (probable, not a proof).")
}

// newFlags is a flag set that reports errors as one line on stderr and
// never exits the process.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("explore "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parseFlags parses and turns -h into exit 0 (after the usage), any other
// error into one line on the flag set's output, prefixed with the
// subcommand, and exit 2. ok is false when the caller should return code.
func parseFlags(fs *flag.FlagSet, args []string) (code int, ok bool) {
	code, ok, _ = parseFlagsMsg(fs, args)
	return code, ok
}

// parseFlagsMsg is parseFlags that also returns the error line printed.
func parseFlagsMsg(fs *flag.FlagSet, args []string) (code int, ok bool, msg string) {
	out, usage := fs.Output(), fs.Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.SetOutput(out)
	fs.Usage = usage
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage()
			return exitOK, false, ""
		}
		msg = fmt.Sprintf("%s (see %s -h)", oneLine(flagHint(fs, err)), fs.Name())
		fmt.Fprintf(out, "%s: %s\n", fs.Name(), msg)
		return exitUsage, false, msg
	}
	return 0, true, ""
}

// flagHint is err's text, with "(did you mean -X?)" after an undefined
// flag that is a typo of one of fs's.
func flagHint(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	const undefined = "flag provided but not defined: -"
	if !strings.HasPrefix(msg, undefined) {
		return msg
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	name := strings.TrimPrefix(strings.TrimPrefix(msg, undefined), "-")
	if c := didyoumean.Closest(name, names); c != "" {
		return msg + " (did you mean -" + c + "?)"
	}
	return msg
}

// oneLine folds a message onto one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func clip(s string) string {
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}
