package linearizability

import (
	"fmt"
	"strings"
	"testing"

	"lockcheck/model"
)

// Hand-built jobs. Times are step numbers; ticks are left 0, so summaries
// say "step N".
func okJob(c, call, ret, read int) model.Job {
	return model.Job{Client: c, CallSeq: call, ReturnSeq: ret, Read: read, ReadOK: true, Wrote: read + 1, Outcome: model.OutcomeOK}
}

func failedJob(c, call, ret, read int) model.Job {
	j := okJob(c, call, ret, read)
	j.Outcome = model.OutcomeFailed
	return j
}

// unknownJob crashed with its write in flight; last is the last step at
// which the write could still land (0: the end of the history).
func unknownJob(c, call, last, read int) model.Job {
	return model.Job{Client: c, CallSeq: call, ReturnSeq: last, Read: read, ReadOK: true, Wrote: read + 1, Outcome: model.OutcomeUnknown}
}

func pendingJob(c, call, read int) model.Job {
	return model.Job{Client: c, CallSeq: call, Read: read, ReadOK: true, Outcome: model.OutcomePending}
}

// readJob is a reader's job (readers=K): a read at seq, and no write.
func readJob(c, seq, read int) model.Job {
	return model.Job{Client: c, CallSeq: seq, ReturnSeq: seq, Read: read, ReadOK: true, Outcome: model.OutcomeRead}
}

func readRejectedJob(c, seq int) model.Job {
	return model.Job{Client: c, CallSeq: seq, ReturnSeq: seq, Outcome: model.OutcomeFailed}
}

// historyCases are ok/bad pairs: each bad history differs from an ok one
// in one fact. why is a substring of the summary.
var historyCases = []struct {
	name  string
	jobs  []model.Job
	final int
	want  Verdict
	why   string
}{
	{"sequential", []model.Job{okJob(0, 1, 2, 0), okJob(1, 3, 4, 1)}, 2, Ok, "2 jobs: 2 increments; final counter 2"},
	{"sequential, final lost", []model.Job{okJob(0, 1, 2, 0), okJob(1, 3, 4, 1)}, 1, Illegal, "the final counter is 1, but 2 increments succeeded"},
	{"sequential, final too high", []model.Job{okJob(0, 1, 2, 0), okJob(1, 3, 4, 1)}, 3, Illegal, "the final counter is 3, but at most 2 increments took effect"},
	{"sequential, no final", []model.Job{okJob(0, 1, 2, 0), okJob(1, 3, 4, 1)}, NoFinal, Ok, "2 jobs: 2 increments)"},
	{"overlapping, B inside A", []model.Job{okJob(0, 1, 4, 0), okJob(1, 2, 3, 1)}, 2, Ok, ""},
	{"B reads before A's increment after it", []model.Job{okJob(0, 1, 2, 1), okJob(1, 3, 4, 0)}, 2, Illegal, ""},
	{"stale read", []model.Job{okJob(0, 1, 2, 0), okJob(1, 3, 4, 0)}, 1, Illegal, "B's write of 1 at step 4 after A's write of 1 at step 2: both read 0, one increment lost"},
	{"lost update, overlapping", []model.Job{okJob(0, 1, 5, 0), okJob(1, 2, 4, 0)}, 1, Illegal, "A's write of 1 at step 5 after B's write of 1 at step 4: both read 0, one increment lost"},
	{"read from the future", []model.Job{okJob(0, 1, 2, 1)}, 1, Illegal, "A read 1 at step 1, but at most 0 increments could come before it"},
	{"read behind a finished increment", []model.Job{unknownJob(2, 1, 10, 0), okJob(0, 2, 3, 1), okJob(1, 4, 5, 0)}, NoFinal, Illegal, "B read 0 at step 4, but 1 increment had succeeded before it (A's, at step 3)"},
	{"read behind finished increments", []model.Job{unknownJob(2, 1, 10, 0), okJob(0, 2, 3, 1), okJob(3, 4, 5, 2), okJob(1, 6, 7, 0)}, NoFinal, Illegal, "B read 0 at step 6, but 2 increments had succeeded before it (the last, D's, at step 5)"},
	{"failed write, no effect", []model.Job{failedJob(0, 1, 5, 0), okJob(1, 2, 3, 0)}, 1, Ok, "2 jobs: 1 increment, 1 failed; final counter 1"},
	{"failed write counted", []model.Job{failedJob(0, 1, 5, 0), okJob(1, 2, 3, 0)}, 2, Illegal, "the final counter is 2, but at most 1 increment took effect"},
	{"read rejected", []model.Job{readRejectedJob(0, 1), okJob(1, 2, 3, 0)}, 1, Ok, ""},
	// Unknown outcomes, both ways: the write may have landed or not.
	{"unknown landed", []model.Job{unknownJob(0, 1, 10, 0), okJob(1, 5, 6, 1)}, 2, Ok, "2 jobs: 1 increment, 1 unknown; final counter 2"},
	{"unknown did not land", []model.Job{unknownJob(0, 1, 10, 0), okJob(1, 5, 6, 0)}, 1, Ok, ""},
	{"unknown landed late, over two increments", []model.Job{unknownJob(0, 1, 20, 0), okJob(1, 5, 6, 0), okJob(2, 7, 8, 1)}, 1, Illegal, "the final counter is 1, but 2 increments succeeded"},
	{"unknown landed in time", []model.Job{unknownJob(0, 1, 4, 0), okJob(1, 5, 6, 1)}, 2, Ok, ""},
	// Its write could land only up to step 4, before B read 0 at step 5:
	// if it landed, B read 1; if not, the counter ends at 1. The final 2
	// fits no order (with return-at-infinity it would be ok: A after B).
	{"unknown could not land after B", []model.Job{unknownJob(0, 1, 4, 0), okJob(1, 5, 6, 0)}, 2, Illegal, "the longest order that fits, A?, B, leaves counter 1, and final: counter = 2 cannot follow"},
	{"unknown until the end", []model.Job{unknownJob(0, 1, 0, 0), okJob(1, 5, 6, 0)}, 2, Illegal, ""},
	{"unknown, then read", []model.Job{unknownJob(0, 1, 0, 1), okJob(1, 5, 6, 0)}, 2, Ok, ""},
	// Pending jobs may or may not take effect (standard linearizability:
	// a pending call may be completed or dropped).
	{"pending, no effect", []model.Job{pendingJob(0, 1, 0), okJob(1, 2, 3, 0)}, 1, Ok, "2 jobs: 1 increment, 1 pending; final counter 1"},
	{"pending, counted", []model.Job{pendingJob(0, 1, 0), okJob(1, 2, 3, 1)}, 2, Ok, ""},
	{"pending cannot explain a lost update", []model.Job{pendingJob(0, 1, 0), okJob(1, 2, 3, 0), okJob(2, 4, 5, 0)}, 1, Illegal, "both read 0"},
	// A reader's job is a read of the counter: it fits where the count is
	// the value it read, and changes nothing.
	{"a reader between increments", []model.Job{okJob(0, 1, 2, 0), readJob(2, 3, 1), okJob(1, 4, 5, 1)}, 2, Ok, "3 jobs: 2 increments, 1 read; final counter 2"},
	{"a reader inside an increment", []model.Job{okJob(0, 1, 4, 0), readJob(1, 2, 1)}, 1, Ok, ""},
	{"a reader behind a finished increment", []model.Job{okJob(0, 1, 2, 0), readJob(1, 3, 0)}, 1, Illegal, ""},
	{"a reader counted as an increment", []model.Job{readJob(1, 1, 0), okJob(0, 2, 3, 0)}, 2, Illegal, "the final counter is 2, but at most 1 increment took effect"},
	{"empty", nil, 0, Ok, "0 jobs: 0 increments; final counter 0"},
	{"empty, counter moved", nil, 1, Illegal, "the final counter is 1, but at most 0 increments took effect"},
}

func TestCheckJobsPairs(t *testing.T) {
	for _, tc := range historyCases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := CheckJobs(tc.jobs, tc.final, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != tc.want {
				t.Fatalf("verdict %s, want %s: %s", res.Verdict, tc.want, res.Summary)
			}
			prefix := map[Verdict]string{Ok: "linearizable: yes (", Illegal: "linearizable: no ("}[tc.want]
			if !strings.HasPrefix(res.Summary, prefix) || !strings.Contains(res.Summary, tc.why) || strings.Contains(res.Summary, "\n") {
				t.Fatalf("summary %q: want one line starting %q containing %q", res.Summary, prefix, tc.why)
			}
			// the fast explanations are sound: each alone rules out every order
			if why := explainCounter(tc.jobs, tc.final); why != "" && res.Verdict != Illegal {
				t.Fatalf("explanation %q for a %s history", why, res.Verdict)
			}
		})
	}
}

// Job order does not matter: porcupine sorts by time.
func TestCheckJobsOrderFree(t *testing.T) {
	for _, tc := range historyCases {
		rev := make([]model.Job, len(tc.jobs))
		for i, j := range tc.jobs {
			rev[len(rev)-1-i] = j
		}
		res, err := CheckJobs(rev, tc.final, Options{})
		if err != nil || res.Verdict != tc.want {
			t.Errorf("%s reversed: %v %v, want %s", tc.name, res.Verdict, err, tc.want)
		}
	}
}

func TestCheckJobsErrors(t *testing.T) {
	good := okJob(0, 1, 2, 0)
	bad := func(f func(j *model.Job)) []model.Job { j := good; f(&j); return []model.Job{j} }
	cases := []struct {
		jobs  []model.Job
		final int
		opts  Options
		want  string
	}{
		{bad(func(j *model.Job) { j.Client = -1 }), 1, Options{}, "job 0: client -1: want 0 to 1023"},
		{bad(func(j *model.Job) { j.Client = 1024 }), 1, Options{}, "job 0: client 1024: want 0 to 1023"},
		{bad(func(j *model.Job) { j.CallSeq = 0 }), 1, Options{}, "job 0 (A): call step 0: want 1 or more"},
		{bad(func(j *model.Job) { j.ReturnSeq = 0 }), 1, Options{}, "returns at step 0 before its call at step 1"},
		{bad(func(j *model.Job) { j.Wrote = 5 }), 1, Options{}, "ok, read 0 but wrote 5: an increment writes read+1"},
		{bad(func(j *model.Job) { j.Read = -2 }), 1, Options{}, "read -2: want 0 or more"},
		{bad(func(j *model.Job) { j.Token = -2 }), 1, Options{}, "token -2: want 0 or more"},
		{bad(func(j *model.Job) { j.ReadOK = false }), 1, Options{}, "ok but its read was rejected"},
		{bad(func(j *model.Job) { j.Outcome = 9 }), 1, Options{}, "outcome 9: want ok, failed, unknown, pending or read"},
		{bad(func(j *model.Job) { j.CallSeq = 5; j.ReturnSeq = 3; j.Outcome = model.OutcomeUnknown }), 1, Options{}, "unknown outcome"},
		{bad(func(j *model.Job) { j.CallSeq = maxSeq + 1; j.ReturnSeq = maxSeq + 1 }), 1, Options{}, "step numbers up to"},
		{[]model.Job{good}, -2, Options{}, "final counter -2: want 0 or more, or NoFinal (-1)"},
		{[]model.Job{good}, 1, Options{Timeout: -1}, "timeout -1ns: want 0 (no limit) or more"},
	}
	for _, tc := range cases {
		_, err := CheckJobs(tc.jobs, tc.final, tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v final %d: error %v, want one line containing %q", tc.jobs, tc.final, err, tc.want)
		}
	}
	if _, err := CheckRun(nil, Options{}); err == nil {
		t.Error("CheckRun(nil): no error")
	}
	if _, err := CheckStorage(nil, Options{}); err == nil {
		t.Error("CheckStorage(nil): no error")
	}
}

// Many overlapping unknown outcomes and a final counter that none of their
// subsets explains: porcupine must try every subset (2^40), so a timeout
// gives Unknown, not a wrong verdict.
func TestCheckJobsTimeoutUnknown(t *testing.T) {
	var jobs []model.Job
	for i := 0; i < 40; i++ {
		jobs = append(jobs, unknownJob(i%8, 1+i, 100, i))
	}
	jobs = append(jobs, okJob(0, 200, 201, 0))
	res, err := CheckJobs(jobs, 0, Options{Timeout: 50_000_000})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != Unknown || !strings.HasPrefix(res.Summary, "linearizable: unknown (no verdict within 50ms") {
		t.Fatalf("%s: %s", res.Verdict, res.Summary)
	}
}

func loadRun(t testing.TB, demo string) *model.Run {
	t.Helper()
	dm, err := model.LoadDemo(demo)
	if err != nil {
		t.Fatal(err)
	}
	run, err := model.Replay(&dm.Scenario.Design, dm.Scenario.Trace)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// The seed's demos: a lock that works (1), fencing that turns the late
// write into an error (3, 6) are linearizable; the lost updates of a pause
// (2) and a slow job (4, 5) are not.
func TestDemos(t *testing.T) {
	cases := []struct {
		demo string
		want Verdict
		why  string
	}{
		{"1", Ok, "linearizable: yes (3 jobs: 3 increments; final counter 3)"},
		{"2", Illegal, "linearizable: no (A's write of 1 at t=15 after B's write of 1 at t=13: both read 0, one increment lost)"},
		{"3", Ok, "linearizable: yes (3 jobs: 2 increments, 1 failed; final counter 2)"},
		{"4", Illegal, "linearizable: no (A's write of 1 at t=13 after B's write of 1 at t=13: both read 0, one increment lost)"},
		{"5", Illegal, "linearizable: no (B's write of 1 at t=13 after A's write of 1 at t=13: both read 0, one increment lost)"},
		{"6", Ok, "linearizable: yes (3 jobs: 2 increments, 1 failed; final counter 2)"},
	}
	for _, tc := range cases {
		run := loadRun(t, tc.demo)
		res, err := CheckRun(run, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != tc.want || res.Summary != tc.why {
			t.Errorf("demo %s: %s %q, want %s %q", tc.demo, res.Verdict, res.Summary, tc.want, tc.why)
		}
		// no-lost-update sees the same (the demos run every job to the end
		// or stop with counter < accepted writes)
		lost := run.Final.Store.Counter != run.Final.Store.Accepted
		if lost != (res.Verdict == Illegal) {
			t.Errorf("demo %s: counter %d, accepted %d, but %s", tc.demo, run.Final.Store.Counter, run.Final.Store.Accepted, res.Verdict)
		}
	}
}

func TestDescribeJobs(t *testing.T) {
	cases := []struct {
		demo string
		want []string
	}{
		{"2", []string{"A: read 0 → write 1 accepted", "B: read 0 → write 1 accepted", "C: read 1 → write 2 accepted", "final: counter = 2"}},
		{"3", []string{"A: read 0 → write 1 (token 33) rejected: 33 < 34", "B: read 0 → write 1 (token 34) accepted", "C: read 1 → write 2 (token 35) accepted", "final: counter = 2"}},
	}
	for _, tc := range cases {
		run := loadRun(t, tc.demo)
		ops, err := jobHistory(run.History, int(run.Final.Store.Counter), len(run.Steps), func(j *model.Job) string { return jobEnding(run, j) })
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, op := range ops {
			got = append(got, counterModel.DescribeOperation(op.Input, op.Output))
		}
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("demo %s:\n%s\nwant\n%s", tc.demo, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
		}
	}
	for _, tc := range []struct {
		j    model.Job
		want string
	}{
		{unknownJob(2, 1, 5, 4), "C: read 4 → write 5 sent, then crashed: outcome unknown"},
		{pendingJob(1, 1, 0), "B: read 0 → (the trace ended before its write)"},
		{readRejectedJob(0, 3), "A: read rejected"},
		{failedJob(0, 1, 2, 7), "A: read 7 → write 8 failed (no effect)"},
	} {
		ops, err := jobHistory([]model.Job{tc.j}, NoFinal, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := counterModel.DescribeOperation(ops[0].Input, ops[0].Output); got != tc.want {
			t.Errorf("%q, want %q", got, tc.want)
		}
	}
	if got := counterModel.DescribeState([]any{2}); got != "{counter 2}" {
		t.Errorf("state %q", got)
	}
}

// A crash between read and write is a failed job: no effect, told as such.
func TestCrashedBeforeWriting(t *testing.T) {
	d, err := model.ParseDesign("redis/cad/none/plain,clients=2,pauses=0,crashes=1")
	if err != nil {
		t.Fatal(err)
	}
	lines := []string{"A acquire", "B acquire", "A read", "A crash"}
	for i := 0; i < 10; i++ { // A's key lives until t=11
		lines = append(lines, "tick", "B acquire")
	}
	trace := mustTrace(t, append(lines, "B read", "tick 2", "B write", "B release")...)
	run, err := model.Replay(&d, trace)
	if err != nil {
		t.Fatal(err)
	}
	res, err := CheckRun(run, Options{HTML: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != Ok || res.Summary != "linearizable: yes (2 jobs: 1 increment, 1 failed; final counter 1)" {
		t.Fatalf("%s %s", res.Verdict, res.Summary)
	}
	for _, want := range []string{"A: read 0 → crashed before writing (no effect)", "crashed"} {
		if !strings.Contains(string(res.HTML), want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
}

// mustTrace reads scenario lines ("tick N" repeats a tick).
func mustTrace(t testing.TB, lines ...string) []model.Action {
	t.Helper()
	var out []model.Action
	for _, l := range lines {
		var n int
		if _, err := fmt.Sscanf(l, "tick %d", &n); err == nil {
			for ; n > 0; n-- {
				out = append(out, model.Action{Kind: model.ActTick})
			}
			continue
		}
		a, err := model.ParseAction(l)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}
