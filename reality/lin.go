package reality

import (
	"time"

	"lockcheck/linearizability"
	"lockcheck/model"
)

// linTimeout bounds each check; the histories here have a few jobs and
// check in milliseconds.
const linTimeout = 10 * time.Second

func init() {
	checkRunLin = func(r *model.Run) (string, string, error) {
		res, err := linearizability.CheckRun(r, linearizability.Options{Timeout: linTimeout})
		return string(res.Verdict), res.Summary, err
	}
	checkJobsLin = func(jobs []model.Job, final int) (string, string, error) {
		res, err := linearizability.CheckJobs(jobs, final, linearizability.Options{Timeout: linTimeout})
		return string(res.Verdict), res.Summary, err
	}
}
