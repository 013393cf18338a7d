package reality

import (
	"time"

	"lockcheck/linearizability"
	"lockcheck/model"
)

// linTimeout bounds each check; the histories here have a few jobs and
// check in milliseconds.
const linTimeout = 10 * time.Second

// linearizable checks both job histories, the model's and reality's, each
// with its final counter, against an atomic counter (porcupine, through
// the linearizability package).
func linearizable(c *Comparison, run *model.Run, p *Play) {
	opts := linearizability.Options{Timeout: linTimeout}
	if res, err := linearizability.CheckRun(run, opts); err != nil {
		c.Model.LinSummary = "not checked: " + err.Error()
	} else {
		c.Model.Linearizable, c.Model.LinSummary = string(res.Verdict), res.Summary
	}
	if res, err := linearizability.CheckJobs(realHistory(&c.d, p), p.Counter, opts); err != nil {
		c.Real.LinSummary = "not checked: " + err.Error()
	} else {
		c.Real.Linearizable, c.Real.LinSummary = string(res.Verdict), res.Summary
	}
}
