package linearizability

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"lockcheck/model"
)

// synthHistory builds n jobs that fit an atomic counter: the k-th job's
// linearization point is step 10k; a sequential job spans 2 steps either
// side of it, an overlapping one up to 25 (about five jobs at once). One
// job in ten fails (write rejected, no effect). With crashes, one in ten
// more crashed with its write in flight: it landed (at its point) or not,
// at random, and could land until up to 25 steps after its point (open:
// until the end of the history, the stand-in for return-at-infinity).
// The final counter is the increments that took effect.
func synthHistory(n int, overlap, crashes, open bool, seed uint64) ([]model.Job, int) {
	rng := rand.New(rand.NewPCG(seed, 99))
	spread := func() int {
		if overlap {
			return rng.IntN(26)
		}
		return 2
	}
	count := 0
	jobs := make([]model.Job, 0, n)
	for k := 0; k < n; k++ {
		p := 30 + 10*k
		call, ret := p-spread(), p+spread()
		j := model.Job{Client: k % 8, CallSeq: call, ReturnSeq: ret, Read: count, ReadOK: true, Wrote: count + 1}
		switch r := rng.IntN(10); {
		case r == 0:
			j.Outcome = model.OutcomeFailed
			j.Read = rng.IntN(count + 1) // a failed job may have read anything
			j.Wrote = j.Read + 1
		case r == 1 && crashes:
			j.Outcome = model.OutcomeUnknown
			if open {
				j.ReturnSeq = 0
			}
			if rng.IntN(2) == 0 {
				count++
			}
		default:
			j.Outcome = model.OutcomeOK
			count++
		}
		jobs = append(jobs, j)
	}
	return jobs, count
}

// loseUpdate turns the last successful job before the end into a lost
// update: it reads what the successful job before it read.
func loseUpdate(jobs []model.Job) []model.Job {
	out := append([]model.Job(nil), jobs...)
	last := -1
	for k := len(out) - 1; k >= 0; k-- {
		if out[k].Outcome != model.OutcomeOK {
			continue
		}
		if last < 0 {
			last = k
			continue
		}
		out[last].Read, out[last].Wrote = out[k].Read, out[k].Read+1
		return out
	}
	panic("fewer than two successful jobs")
}

type synthCase struct {
	shape, unknowns        string // for benchmark names
	overlap, crashes, open bool
}

var synthCases = []synthCase{
	{"sequential", "none", false, false, false},
	{"sequential", "finite", false, true, false},
	{"overlapping", "none", true, false, false},
	{"overlapping", "finite", true, true, false},
	{"overlapping", "open", true, true, true},
}

// openIllegalMax is the largest illegal history with open unknown outcomes
// that is checked: with about 100 writes that may land until the end,
// porcupine tries their subsets and does not finish (the reason unknown
// outcomes get the last step their write could land).
const openIllegalMax = 100

// The synthetic histories are what they claim: linearizable, and not with
// one lost update.
func TestSynthHistories(t *testing.T) {
	for _, c := range synthCases {
		for _, n := range []int{10, 100, 1000} {
			jobs, final := synthHistory(n, c.overlap, c.crashes, c.open, uint64(n))
			res, err := CheckJobs(jobs, final, Options{Timeout: 10e9})
			if err != nil || res.Verdict != Ok {
				t.Fatalf("%s/%s/%d: %v %s", c.shape, c.unknowns, n, err, res.Summary)
			}
			if c.open && n > openIllegalMax {
				continue
			}
			res, err = CheckJobs(loseUpdate(jobs), final, Options{Timeout: 10e9})
			if err != nil || res.Verdict != Illegal {
				t.Fatalf("%s/%s/%d with a lost update: %v %s", c.shape, c.unknowns, n, err, res.Summary)
			}
		}
	}
}

// BenchmarkCheckJobs: synthetic histories of 10, 100 and 1,000 jobs,
// linearizable or with one lost update near the end, sequential or about
// five at once, with no crashed clients or one in ten (unknowns=finite:
// its write could land until a known step; open: until the end).
// Compare crashed with not: benchstat -col /unknowns.
func BenchmarkCheckJobs(b *testing.B) {
	for _, verdict := range []string{"ok", "illegal"} {
		for _, shape := range []string{"sequential", "overlapping"} {
			for _, n := range []int{10, 100, 1000} {
				for _, c := range synthCases {
					if c.shape != shape || (verdict == "illegal" && c.open && n > openIllegalMax) {
						continue
					}
					jobs, final := synthHistory(n, c.overlap, c.crashes, c.open, uint64(n))
					want := Ok
					if verdict == "illegal" {
						jobs, want = loseUpdate(jobs), Illegal
					}
					b.Run(fmt.Sprintf("verdict=%s/shape=%s/jobs=%d/unknowns=%s", verdict, shape, n, c.unknowns), func(b *testing.B) {
						for b.Loop() {
							res, err := CheckJobs(jobs, final, Options{})
							if err != nil || res.Verdict != want {
								b.Fatalf("%v %s", err, res.Summary)
							}
						}
					})
				}
			}
		}
	}
}

// The counterexamples explore prints: the demos' histories, with and
// without the HTML page (benchstat -col /html).
func BenchmarkCheckRunDemo(b *testing.B) {
	for _, demo := range []string{"2", "3", "5"} {
		run := loadRun(b, demo)
		for _, html := range []bool{false, true} {
			b.Run(fmt.Sprintf("demo=%s/html=%v", demo, html), func(b *testing.B) {
				for b.Loop() {
					if _, err := CheckRun(run, Options{HTML: html}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkCheckStorageDemo(b *testing.B) {
	run := loadRun(b, "3")
	for b.Loop() {
		if _, err := CheckStorage(run, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// Unknown outcomes with a finite last step against the same outcomes open
// until the end of the history (the stand-in for return-at-infinity), on
// illegal histories, where porcupine must rule out every order
// (benchstat -col /return).
func BenchmarkUnknownReturn(b *testing.B) {
	for _, n := range []int{100, 200, 300} {
		for _, open := range []bool{false, true} {
			jobs, final := synthHistory(n, true, true, open, uint64(n))
			jobs = loseUpdate(jobs)
			name := "finite"
			if open {
				name = "open"
			}
			b.Run(fmt.Sprintf("jobs=%d/return=%s", n, name), func(b *testing.B) {
				for b.Loop() {
					if res, _ := CheckJobs(jobs, final, Options{}); res.Verdict != Illegal {
						b.Fatal(res.Summary)
					}
				}
			})
		}
	}
}
