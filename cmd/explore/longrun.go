package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"lockcheck/explore"
)

// interruptible is a context that SIGINT or SIGTERM cancels. After the
// first signal the default action comes back, so that a second one kills
// the process at once. signalled names the signal, "" if none came.
func interruptible() (ctx context.Context, signalled func() string, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	var mu sync.Mutex
	name := ""
	go func() {
		select {
		case s := <-ch:
			signal.Stop(ch)
			mu.Lock()
			name = sigName(s)
			mu.Unlock()
			cancel()
		case <-done:
		}
	}()
	return ctx, func() string {
			mu.Lock()
			defer mu.Unlock()
			return name
		}, func() {
			signal.Stop(ch)
			close(done)
			cancel()
		}
}

// failInterrupted reports a command cut short by a signal: one line on
// stderr naming the signal and what was left undone ("stopped by SIGINT
// …") and, for -json, the object {"error": "..."} on stdout. It returns
// exit 3 (incomplete). err is the cut run's error (wrapping the context's),
// or nil; undone, if not "", says what is left undone.
func failInterrupted(stdout, stderr io.Writer, cmd string, asJSON bool, sig string, err error, undone string) int {
	msg := "stopped by " + sig
	if err != nil {
		msg += ": " + strings.TrimSuffix(strings.TrimSuffix(err.Error(), context.Canceled.Error()), ": ")
	}
	if undone != "" {
		msg += "; " + undone
	}
	msg = oneLine(msg)
	fmt.Fprintf(stderr, "explore %s: %s\n", cmd, msg)
	if asJSON {
		writeJSONError(stdout, msg)
	}
	return exitIncomplete
}

func sigName(s os.Signal) string {
	switch s {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

// progressPrinter writes the long-run lines on stderr. On a terminal the
// progress line is rewritten in place (carriage return, erase to the end of
// the line) and cleared before any other line; elsewhere (a pipe, a file)
// it is a line of its own every pipeEvery. A few lines of our own rather
// than a progress-bar library: a bar wants a known total, and a
// breadth-first search does not know how many levels are left.
type progressPrinter struct {
	mu     sync.Mutex
	w      io.Writer
	tty    bool
	prefix string
	last   time.Time
	shown  bool // a progress line is on the terminal
}

// pipeEvery is how often progress is printed when stderr is not a terminal.
var pipeEvery = 5 * time.Second

func newProgressPrinter(w io.Writer, prefix string) *progressPrinter {
	return &progressPrinter{w: w, tty: isTerminal(w), prefix: prefix}
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0 && os.Getenv("TERM") != "dumb"
}

// progress shows a snapshot of the search.
func (p *progressPrinter) progress(s explore.Progress) {
	text := fmt.Sprintf("%s%s states, depth %d", p.prefix, thousands(s.States), s.Depth)
	if s.Level > 0 {
		text += fmt.Sprintf(" (level %d%% of %s)", s.LevelDone*100/s.Level, thousands(s.Level))
	}
	text += fmt.Sprintf(", %s states/s", thousands(int64(float64(s.States)/max(s.Seconds, 1e-9))))
	if rss := residentBytes(); rss > 0 {
		text += fmt.Sprintf(", %s MB resident", thousands(rss>>20))
	} else {
		text += fmt.Sprintf(", %s MB", thousands(s.MemoryBytes>>20))
	}
	text += ", " + elapsed(s.Seconds)
	p.show(text)
}

// runs shows a simulation's runs done, with an ETA (the runs are known).
func (p *progressPrinter) runs(done, total int, sec float64) {
	rate := float64(done) / max(sec, 1e-9)
	text := fmt.Sprintf("%s%s of %s runs, %s runs/s", p.prefix, thousands(int64(done)), thousands(int64(total)), thousands(int64(rate)))
	if rss := residentBytes(); rss > 0 {
		text += fmt.Sprintf(", %s MB resident", thousands(rss>>20))
	}
	text += ", " + elapsed(sec)
	if done > 0 && done < total {
		text += ", about " + elapsed(float64(total-done)/rate) + " left"
	}
	p.show(text)
}

// show prints a progress text: in place on a terminal, else at most every
// pipeEvery.
func (p *progressPrinter) show(text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if !p.tty && now.Sub(p.last) < pipeEvery {
		return
	}
	p.last = now
	if p.tty {
		fmt.Fprintf(p.w, "\r%s\x1b[K", text)
		p.shown = true
		return
	}
	fmt.Fprintln(p.w, text)
}

// line prints a line of its own (a violation found, a notice).
func (p *progressPrinter) line(text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	fmt.Fprintln(p.w, p.prefix+text)
}

// done clears the progress line before the result.
func (p *progressPrinter) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
}

func (p *progressPrinter) clear() {
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.shown = false
	}
}

// elapsed is 42s, 3m05s or 2h01m.
func elapsed(sec float64) string {
	s := int64(sec)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%dh%02dm", s/3600, s/60%60)
}

// residentBytes is the process's resident memory now (Linux), or 0.
func residentBytes() int64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}

// peakResidentBytes is the most resident memory the process has had
// (getrusage), or 0 where it is not known.
func peakResidentBytes() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Maxrss << 10 // kilobytes on Linux
}

// wantsJSON reports whether the command line asks for JSON, looked at
// before (or without) parsing it, so that even a flag error is answered in
// JSON.
func wantsJSON(args []string) bool {
	ans := false
	for _, a := range args {
		if a == "--" {
			break
		}
		switch a {
		case "-json", "--json", "-json=true", "--json=true", "-json=1", "--json=1":
			ans = true
		case "-json=false", "--json=false", "-json=0", "--json=0":
			ans = false
		}
	}
	return ans
}

// failUsage reports bad input: one line on stderr and, for -json, the
// object {"error": "..."} on stdout. It returns exit 2.
func failUsage(stdout, stderr io.Writer, cmd string, asJSON bool, msg string) int {
	msg = oneLine(msg)
	fmt.Fprintf(stderr, "explore %s: %s\n", cmd, msg)
	if asJSON {
		writeJSONError(stdout, msg)
	}
	return exitUsage
}

func writeJSONError(w io.Writer, msg string) {
	out, _ := json.Marshal(struct {
		Error string `json:"error"`
	}{clipWords(msg)})
	fmt.Fprintf(w, "%s\n", out)
}

// parseFlagsJSON is parseFlags for a command with -json: a flag error is
// also the object {"error": "..."} on stdout when the line asks for JSON.
func parseFlagsJSON(fs *flag.FlagSet, args []string, stdout io.Writer) (code int, ok bool) {
	code, ok, msg := parseFlagsMsg(fs, args)
	if msg != "" && wantsJSON(args) {
		writeJSONError(stdout, msg)
	}
	return code, ok
}
