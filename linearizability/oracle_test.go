package linearizability

import (
	"math/rand/v2"
	"testing"

	"lockcheck/model"
)

// oracle decides linearizability of a small job history by brute force,
// without porcupine: is there an order of all the jobs (failed ones
// included) and the final read, and for each unknown or pending job a
// choice of landed or not, such that a job that returned before another
// was called comes first, every successful job (and every landed one)
// reads the count of landed increments before it, and the final read sees
// the count? Depth-first over the set of jobs placed so far and the count,
// with memo.
func oracle(jobs []model.Job, final int) bool {
	type op struct {
		call, ret int
		job       *model.Job // nil: the final read
	}
	end := 0
	for k := range jobs {
		end = max(end, jobs[k].CallSeq, jobs[k].ReturnSeq)
	}
	var ops []op
	for k := range jobs {
		j := &jobs[k]
		ret := j.ReturnSeq
		if j.Outcome == model.OutcomePending || (j.Outcome == model.OutcomeUnknown && ret == 0) {
			ret = end
		}
		ops = append(ops, op{j.CallSeq, ret, j})
	}
	if final != NoFinal {
		ops = append(ops, op{end + 1, end + 1, nil})
	}
	n := len(ops)
	type key struct{ placed, count int }
	dead := map[key]bool{}
	var dfs func(placed, count int) bool
	dfs = func(placed, count int) bool {
		if placed == 1<<n-1 {
			return true
		}
		if dead[key{placed, count}] {
			return false
		}
		for i := 0; i < n; i++ {
			if placed&(1<<i) != 0 {
				continue
			}
			// i may go next only if no unplaced job returned before i's call
			ready := true
			for k := 0; k < n; k++ {
				if k != i && placed&(1<<k) == 0 && ops[k].ret < ops[i].call {
					ready = false
				}
			}
			if !ready {
				continue
			}
			next := placed | 1<<i
			j := ops[i].job
			var counts []int // counts after i, for each way i can go
			switch {
			case j == nil:
				if count == final {
					counts = []int{count}
				}
			case j.Outcome == model.OutcomeOK:
				if count == j.Read {
					counts = []int{count + 1}
				}
			case j.Outcome == model.OutcomeFailed:
				counts = []int{count}
			case j.Outcome == model.OutcomeRead: // a reader's job: a read
				if count == j.Read {
					counts = []int{count}
				}
			default: // unknown, pending: landed or not
				counts = []int{count}
				if j.ReadOK && count == j.Read {
					counts = append(counts, count+1)
				}
			}
			for _, c := range counts {
				if dfs(next, c) {
					return true
				}
			}
		}
		dead[key{placed, count}] = true
		return false
	}
	return dfs(0, 0)
}

// randomSmallHistory draws up to 7 jobs with small reads and steps, so
// that about half the histories fit.
func randomSmallHistory(rng *rand.Rand) ([]model.Job, int) {
	n := rng.IntN(8)
	var jobs []model.Job
	for k := 0; k < n; k++ {
		call := 1 + rng.IntN(20)
		read := rng.IntN(n + 1)
		j := model.Job{Client: rng.IntN(4), CallSeq: call, ReturnSeq: call + rng.IntN(9), Read: read, ReadOK: true, Wrote: read + 1}
		switch r := rng.IntN(11); {
		case r < 6:
			j.Outcome = model.OutcomeOK
		case r < 8:
			j.Outcome = model.OutcomeFailed
			j.ReadOK = rng.IntN(3) > 0
		case r < 9:
			j.Outcome = model.OutcomeUnknown
			if rng.IntN(3) == 0 {
				j.ReturnSeq = 0
			}
		case r < 10:
			j.Outcome = model.OutcomePending
			j.ReturnSeq = 0
		default: // a reader's job (readers=K): one read, returned at once
			j.Outcome, j.ReturnSeq, j.Wrote = model.OutcomeRead, call, 0
		}
		jobs = append(jobs, j)
	}
	return jobs, rng.IntN(n+2) - 1 // NoFinal sometimes
}

// Porcupine with the counter model agrees with the brute-force oracle on
// many small random histories: the model's step (including dropping failed
// jobs before the check, and the finite returns of unknown outcomes) is
// linearizability against an atomic counter.
func TestOracleAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(2024, 5))
	seen := map[Verdict]int{}
	for i := 0; i < 20000; i++ {
		jobs, final := randomSmallHistory(rng)
		checkAgainstOracle(t, jobs, final)
		res, _ := CheckJobs(jobs, final, Options{})
		seen[res.Verdict]++
	}
	t.Logf("verdicts: %v", seen)
	if seen[Ok] < 2000 || seen[Illegal] < 2000 {
		t.Fatalf("verdicts %v: the random histories are too one-sided to test anything", seen)
	}
}

// The oracle itself, on the hand-built pairs.
func TestOracleOnPairs(t *testing.T) {
	for _, tc := range historyCases {
		if got := oracle(tc.jobs, tc.final); got != (tc.want == Ok) {
			t.Errorf("%s: oracle says %v, want %s", tc.name, got, tc.want)
		}
	}
}

// checkAgainstOracle checks one history: no error for valid input, the
// oracle's verdict, sound explanations, and the same result twice.
func checkAgainstOracle(t testing.TB, jobs []model.Job, final int) {
	t.Helper()
	res, err := CheckJobs(jobs, final, Options{})
	if err != nil {
		t.Fatalf("%+v final %d: %v", jobs, final, err)
	}
	want := Illegal
	if oracle(jobs, final) {
		want = Ok
	}
	if res.Verdict != want {
		t.Fatalf("%s, oracle says %s: %+v final %d", res.Summary, want, jobs, final)
	}
	if why := explainCounter(jobs, final); why != "" && want != Illegal {
		t.Fatalf("explanation %q for a linearizable history %+v final %d", why, jobs, final)
	}
	again, _ := CheckJobs(jobs, final, Options{})
	if again.Verdict != res.Verdict || again.Summary != res.Summary {
		t.Fatalf("not deterministic: %+v then %+v", res, again)
	}
}

// FuzzCheckJobs builds small job histories from bytes (5 bytes a job, the
// first byte the final counter): CheckJobs never panics, is deterministic
// (verdict, summary and HTML page), rejects bad input with an error, and
// agrees with the brute-force oracle on valid input.
func FuzzCheckJobs(f *testing.F) {
	f.Add([]byte{3, 0, 1, 2, 0, 0, 1, 3, 2, 1, 0})
	f.Add([]byte{2, 0, 1, 9, 0, 0, 1, 2, 3, 0, 0, 2, 4, 1, 2, 0})
	f.Add([]byte{0, 0, 1, 0, 0, 2})
	f.Add([]byte{255, 1, 250, 200, 7, 255})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		final := int(data[0]%10) - 2 // -2 is invalid, -1 NoFinal
		data = data[1:]
		var jobs []model.Job
		for len(data) >= 5 && len(jobs) < 8 {
			b := data[:5]
			data = data[5:]
			j := model.Job{
				Client:  int(b[0]%10) - 1, // -1 is invalid
				CallSeq: int(b[1] % 40),   // 0 is invalid
				Read:    int(b[3]%8) - 1,  // -1 is invalid
				Outcome: model.Outcome(b[4] % 5),
				ReadOK:  b[4]&0x80 == 0,
			}
			j.ReturnSeq = j.CallSeq + int(b[2]%16) - 2 // may return before its call
			j.Wrote = j.Read + 1
			if b[4]&0x40 != 0 {
				j.Wrote++ // not an increment
			}
			if b[4]&0x20 != 0 {
				j.ReturnSeq = 0
			}
			jobs = append(jobs, j)
		}
		res, err := CheckJobs(jobs, final, Options{HTML: true})
		again, err2 := CheckJobs(jobs, final, Options{HTML: true})
		if (err == nil) != (err2 == nil) || res.Verdict != again.Verdict || res.Summary != again.Summary || string(res.HTML) != string(again.HTML) {
			t.Fatalf("not deterministic: %v %v / %v %v", res.Summary, err, again.Summary, err2)
		}
		if err != nil {
			if len(err.Error()) == 0 || len(res.HTML) != 0 {
				t.Fatalf("error %q with a result", err)
			}
			return
		}
		if len(res.HTML) == 0 {
			t.Fatal("no HTML")
		}
		checkAgainstOracle(t, jobs, final)
	})
}
