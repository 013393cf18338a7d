package linearizability

import (
	"strings"
	"testing"

	"lockcheck/model"
)

// rwRun replays a scenario of etcd's reader-writer lock (readers=K).
func rwRun(t *testing.T, text string) *model.Run {
	t.Helper()
	sc, err := model.ParseScenario(text)
	if err != nil {
		t.Fatal(err)
	}
	r, err := model.Replay(&sc.Design, sc.Trace)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A reader's job is one read: the counter's history stays linearizable
// with readers in it, and readers reading together agree with the lock;
// a reader whose session expired in the queue (session-check=none) reads
// while a writer holds: the storage accepts it, the lock did not allow it.
func TestReaderJobs(t *testing.T) {
	r := rwRun(t, `design etcd-mutex/del/none/plain,readers=2,pauses=0
A acquire
B acquire
C acquire
A read
A release
B read
B release
C acquire
C read
tick 2
C write
C release
`)
	res, err := CheckRun(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != Ok || res.Summary != "linearizable: yes (3 jobs: 1 increment, 2 read; final counter 1)" {
		t.Errorf("%s %q", res.Verdict, res.Summary)
	}
	st, err := CheckStorage(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Verdict != Ok || len(st.Disagreements) != 0 {
		t.Errorf("two readers together: %s %q", st.Verdict, st.Summary)
	}

	r = rwRun(t, `design etcd-mutex/del/none/plain,readers=1,session-check=none
B acquire
A acquire
C acquire
A pause 11
B read
tick 2
B write
B release
tick 8
C acquire
C read
tick
A acquire
A read
A release
tick
C write
C release
`)
	res, err = CheckRun(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != Ok || res.Summary != "linearizable: yes (3 jobs: 2 increments, 1 read; final counter 2)" {
		t.Errorf("%s %q", res.Verdict, res.Summary)
	}
	st, err = CheckStorage(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Disagreements) != 1 || !strings.Contains(st.Summary, "t=12 A's read accepted while the key is C's") {
		t.Errorf("the reader without a key: %q", st.Summary)
	}
}
