package linearizability

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"lockcheck/model"
)

// Verdict is porcupine's answer.
type Verdict string

const (
	Ok      Verdict = "ok"      // linearizable
	Illegal Verdict = "illegal" // not linearizable
	Unknown Verdict = "unknown" // no verdict within Options.Timeout
)

// Options control a check.
type Options struct {
	HTML    bool          // also render porcupine's visualisation into Result.HTML
	Timeout time.Duration // 0: no limit (a check that runs out of time is Unknown)
}

// Result is a verdict with its explanation.
type Result struct {
	Verdict Verdict
	HTML    []byte // porcupine's visualisation, when Options.HTML
	// Summary is one line: "linearizable: yes (…)", "linearizable: no (why)"
	// or "linearizable: unknown (…)".
	Summary string
}

// CheckRun checks the run's job history against an atomic counter, ending
// with a read of the run's final counter.
func CheckRun(r *model.Run, opts Options) (Result, error) {
	if r == nil {
		return Result{}, errors.New("linearizability: no run to check (nil)")
	}
	ops, err := jobHistory(r.History, int(r.Final.Store.Counter), len(r.Steps), func(j *model.Job) string { return jobEnding(r, j) })
	if err != nil {
		return Result{}, fmt.Errorf("linearizability: design %s: %v", r.Design.Name(), err)
	}
	var ann []porcupine.Annotation
	if opts.HTML {
		ann = runAnnotations(r)
	}
	return checkCounter(r.History, int(r.Final.Store.Counter), ops, opts, ann, "lockcheck: "+r.Design.Name())
}

// CheckJobs checks a hand-built job history: jobs in any order, each with
// CallSeq/ReturnSeq as step numbers of one trace, and the counter read after
// all of them (NoFinal: not known, no final read).
func CheckJobs(jobs []model.Job, final int, opts Options) (Result, error) {
	ops, err := jobHistory(jobs, final, 0, nil)
	if err != nil {
		return Result{}, fmt.Errorf("linearizability: %v", err)
	}
	return checkCounter(jobs, final, ops, opts, nil, "lockcheck: job history")
}

func checkCounter(jobs []model.Job, final int, ops []porcupine.Operation, opts Options, ann []porcupine.Annotation, title string) (Result, error) {
	if opts.Timeout < 0 {
		return Result{}, fmt.Errorf("linearizability: timeout %v: want 0 (no limit) or more", opts.Timeout)
	}
	// A failed job has no effect: it fits anywhere in its interval of any
	// order of the others, so dropping it keeps the verdict. Dropping them
	// keeps porcupine from trying every subset of overlapping failures;
	// the visualisation still shows them.
	effective := slices.DeleteFunc(slices.Clone(ops), func(op porcupine.Operation) bool {
		return op.Output.(jobReturn).Outcome == model.OutcomeFailed && !op.Input.(jobCall).Final
	})
	res := porcupine.CheckOperationsTimeout(counterModel, effective, opts.Timeout)
	var info porcupine.LinearizationInfo
	verbose := false
	if opts.HTML {
		_, info = porcupine.CheckOperationsVerbose(counterModel, ops, opts.Timeout)
		verbose = true
	}
	out := Result{Verdict: verdictOf(res)}
	switch out.Verdict {
	case Ok:
		out.Summary = "linearizable: yes (" + counts(jobs, final) + ")"
	case Unknown:
		out.Summary = fmt.Sprintf("linearizable: unknown (no verdict within %v; %s)", opts.Timeout, counts(jobs, final))
	case Illegal:
		why := explainCounter(jobs, final)
		if why == "" {
			if !verbose {
				_, info = porcupine.CheckOperationsVerbose(counterModel, ops, opts.Timeout)
			}
			why = explainPartial(counterModel, ops, info)
		}
		out.Summary = "linearizable: no (" + why + ")"
	}
	if opts.HTML {
		html, err := render(counterModel, info, ann, title)
		if err != nil {
			return Result{}, err
		}
		out.HTML = html
	}
	return out, nil
}

func verdictOf(r porcupine.CheckResult) Verdict {
	switch r {
	case porcupine.Ok:
		return Ok
	case porcupine.Illegal:
		return Illegal
	}
	return Unknown
}

// counts is "3 jobs: 2 increments, 1 failed; final counter 2".
func counts(jobs []model.Job, final int) string {
	var n [5]int
	for k := range jobs {
		if o := jobs[k].Outcome; o <= model.OutcomeRead {
			n[o]++
		}
	}
	parts := []string{plural(n[model.OutcomeOK], "increment", "increments")}
	for _, o := range []model.Outcome{model.OutcomeFailed, model.OutcomeUnknown, model.OutcomePending, model.OutcomeRead} {
		if n[o] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[o], o))
		}
	}
	s := plural(len(jobs), "job", "jobs") + ": " + strings.Join(parts, ", ")
	if final != NoFinal {
		s += fmt.Sprintf("; final counter %d", final)
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// when places a job's event in the story: its tick if known, else its step.
func when(tick, seq int) string {
	if tick > 0 {
		return fmt.Sprintf("t=%d", tick)
	}
	return fmt.Sprintf("step %d", seq)
}

// explainCounter says why the jobs cannot be linearized, from facts each
// of which alone rules out every order; "" if none of them applies (then
// porcupine's longest partial order explains it).
func explainCounter(jobs []model.Job, final int) string {
	idx := make([]int, 0, len(jobs))
	maybe := 0 // unknown or pending jobs that read: may have taken effect
	for k := range jobs {
		switch jobs[k].Outcome {
		case model.OutcomeOK:
			idx = append(idx, k)
		case model.OutcomeUnknown, model.OutcomePending:
			if jobs[k].ReadOK {
				maybe++
			}
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int { return jobs[a].ReturnSeq - jobs[b].ReturnSeq })
	// Two successful increments that read the same value: the count only
	// grows, so at most one of them read the count before it.
	first := map[int]int{}
	for _, k := range idx {
		j := &jobs[k]
		if p, dup := first[j.Read]; dup {
			e := &jobs[p]
			return fmt.Sprintf("%s's write of %d at %s after %s's write of %d at %s: both read %d, one increment lost",
				clientName(j.Client), j.Read+1, when(j.ReturnTick, j.ReturnSeq),
				clientName(e.Client), e.Read+1, when(e.ReturnTick, e.ReturnSeq), j.Read)
		}
		first[j.Read] = k
	}
	ok := len(idx)
	if final != NoFinal && final < ok {
		return fmt.Sprintf("the final counter is %d, but %s succeeded", final, plural(ok, "increment", "increments"))
	}
	if final != NoFinal && final > ok+maybe {
		return fmt.Sprintf("the final counter is %d, but at most %s took effect", final, plural(ok+maybe, "increment", "increments"))
	}
	for _, k := range idx {
		j := &jobs[k]
		// Every increment before j's linearization point was called before
		// j returned; every successful one that returned before j was
		// called is before it.
		could, must, mustK := 0, 0, -1
		for m := range jobs {
			o := &jobs[m]
			if m == k || !o.ReadOK || o.Outcome == model.OutcomeFailed || o.Outcome == model.OutcomeRead {
				continue
			}
			if o.CallSeq <= j.ReturnSeq {
				could++
			}
			if o.Outcome == model.OutcomeOK && o.ReturnSeq < j.CallSeq {
				must++
				if mustK < 0 || o.ReturnSeq > jobs[mustK].ReturnSeq {
					mustK = m
				}
			}
		}
		if j.Read > could {
			return fmt.Sprintf("%s read %d at %s, but at most %s could come before it",
				clientName(j.Client), j.Read, when(j.CallTick, j.CallSeq), plural(could, "increment", "increments"))
		}
		if j.Read < must {
			o := &jobs[mustK]
			last := "the last, "
			if must == 1 {
				last = ""
			}
			return fmt.Sprintf("%s read %d at %s, but %s had succeeded before it (%s%s's, at %s)",
				clientName(j.Client), j.Read, when(j.CallTick, j.CallSeq), plural(must, "increment", "increments"),
				last, clientName(o.Client), when(o.ReturnTick, o.ReturnSeq))
		}
	}
	return ""
}

// explainPartial tells porcupine's longest partial linearization (the
// first in canonical order), the counter it leaves, and the operation that
// cannot follow it (of those left, the one that returns first).
func explainPartial(m porcupine.Model, ops []porcupine.Operation, info porcupine.LinearizationInfo) string {
	parts := info.PartialLinearizations()
	var best []int
	if len(parts) > 0 {
		if partials := canonicalPartials(parts[0]); len(partials) > 0 {
			best = partials[0]
		}
	}
	state := m.Init()
	var names []string
	in := make([]bool, len(ops))
	for _, id := range best {
		_, state = m.Step(state, ops[id].Input, ops[id].Output)
		names = append(names, opName(ops[id]))
		in[id] = true
	}
	next := -1
	for id := range ops {
		if !in[id] && (next < 0 || ops[id].Return < ops[next].Return) {
			next = id
		}
	}
	blocked := "no operation"
	if next >= 0 {
		blocked = m.DescribeOperation(ops[next].Input, ops[next].Output)
	}
	if len(names) == 0 {
		return fmt.Sprintf("no job can go first: %s does not fit", blocked)
	}
	return fmt.Sprintf("the longest order that fits, %s, leaves %s, and %s cannot follow",
		strings.Join(names, ", "), countsOf(state), blocked)
}

// opName is a job's client letter, with "?" if its effect is uncertain, or
// "final read".
func opName(op porcupine.Operation) string {
	call, ret := op.Input.(jobCall), op.Output.(jobReturn)
	switch {
	case call.Final:
		return "final read"
	case ret.Outcome == model.OutcomeUnknown || ret.Outcome == model.OutcomePending:
		return clientName(call.Client) + "?"
	}
	return clientName(call.Client)
}

// countsOf is a set of counter states in words: "counter 1", "counter 1 or 2".
func countsOf(state any) string {
	var ns []int
	for _, s := range state.([]any) {
		ns = append(ns, s.(int))
	}
	slices.Sort(ns)
	words := make([]string, len(ns))
	for i, n := range ns {
		words[i] = fmt.Sprint(n)
	}
	return "counter " + strings.Join(words, " or ")
}

// canonicalPartials orders partial linearizations longest first, then by
// their operation ids; porcupine hands them out in map order.
func canonicalPartials(p [][]int) [][]int {
	out := slices.Clone(p)
	slices.SortStableFunc(out, func(a, b []int) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return slices.Compare(a, b)
	})
	return out
}

// render is porcupine's visualisation with annotations, in canonical form.
func render(m porcupine.Model, info porcupine.LinearizationInfo, ann []porcupine.Annotation, title string) ([]byte, error) {
	info.AddAnnotations(ann)
	var buf bytes.Buffer
	if err := porcupine.Visualize(m, info, &buf); err != nil {
		return nil, fmt.Errorf("linearizability: rendering the visualisation: %v", err)
	}
	out, _ := canonicalHTML(buf.Bytes(), title)
	return out, nil
}
