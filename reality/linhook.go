package reality

import "lockcheck/model"

// The linearizability checkers, wired in by lin.go: each returns the
// verdict (ok, illegal, unknown) and a one-line summary. When nil, the
// report says the history was not checked.
var (
	checkRunLin  func(r *model.Run) (verdict, summary string, err error)
	checkJobsLin func(jobs []model.Job, final int) (verdict, summary string, err error)
)

// linearizable checks both histories, the model's and reality's, against
// an atomic counter.
func linearizable(c *Comparison, run *model.Run, p *Play) {
	if checkRunLin == nil || checkJobsLin == nil {
		return
	}
	v, s, err := checkRunLin(run)
	if err != nil {
		v, s = "", "not checked: "+err.Error()
	}
	c.Model.Linearizable, c.Model.LinSummary = v, s
	v, s, err = checkJobsLin(realHistory(&c.d, p), p.Counter)
	if err != nil {
		v, s = "", "not checked: "+err.Error()
	}
	c.Real.Linearizable, c.Real.LinSummary = v, s
}
