package properties

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

var rapidLogFlag = flag.Bool("properties.rapidlog", false, "print rapid's own log lines (with -rapid.debug: every shrinking step) to standard error")

// recorder is a rapid.TB that records instead of failing: FailNow and
// Fatalf mark it failed and return, where testing.T would end the
// goroutine. A test hands it to rapid.Check and then asserts on what rapid
// reported: that a known-unsafe design IS caught, or that a safe one is not.
type recorder struct {
	name string

	mu     sync.Mutex
	failed bool
	errs   []string // Errorf/Fatalf/Error/Fatal messages, in order
}

func newRecorder(name string) *recorder { return &recorder{name: name} }

func (r *recorder) Helper()      {}
func (r *recorder) Name() string { return r.name }

// Logs are dropped (rapid logs every draw of the final, shrunk run, and
// the suite renders that run itself) unless -properties.rapidlog is set;
// then they go to standard error, with -rapid.debug's shrinking steps.
func (r *recorder) Logf(format string, args ...any) {
	if *rapidLogFlag {
		fmt.Fprintf(os.Stderr, "[%s] %s\n", r.name, fmt.Sprintf(format, args...))
	}
}

func (r *recorder) Log(args ...any) { r.Logf("%s", fmt.Sprint(args...)) }

// rapid.Check never skips its TB; a skip would be a bug in the suite.
func (r *recorder) Skipf(format string, args ...any) { r.Errorf("unexpected skip: "+format, args...) }
func (r *recorder) Skip(args ...any)                 { r.Error(append([]any{"unexpected skip: "}, args...)...) }
func (r *recorder) SkipNow()                         { r.Error("unexpected SkipNow") }

func (r *recorder) Errorf(format string, args ...any) { r.record(fmt.Sprintf(format, args...)) }
func (r *recorder) Error(args ...any)                 { r.record(fmt.Sprint(args...)) }
func (r *recorder) Fatalf(format string, args ...any) { r.record(fmt.Sprintf(format, args...)) }
func (r *recorder) Fatal(args ...any)                 { r.record(fmt.Sprint(args...)) }
func (r *recorder) FailNow()                          { r.Fail() }

func (r *recorder) Fail() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = true
}

func (r *recorder) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}

func (r *recorder) record(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = true
	r.errs = append(r.errs, msg)
}

// report is everything rapid said, one message after another.
func (r *recorder) report() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.errs, "\n")
}

var failedAfter = regexp.MustCompile(`\[rapid\] (?:failed|panic) after (\d+) tests`)

// checksToCatch is the number of the check that failed (rapid reports how
// many passed before it), or 0 when rapid did not say.
func (r *recorder) checksToCatch() int {
	m := failedAfter.FindStringSubmatch(r.report())
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n + 1
}
