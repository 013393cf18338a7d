package properties

import (
	"fmt"
	"time"

	"pgregory.net/rapid"

	"lockcheck/linearizability"
	"lockcheck/model"
)

// linCheck hands a finished run's job history to the linearizability
// checker and returns porcupine's verdict ("ok", "illegal" or "unknown")
// with its one-line summary.
var linCheck = func(r *model.Run) (verdict, summary string, err error) {
	res, err := linearizability.CheckRun(r, linearizability.Options{Timeout: linTimeout})
	return string(res.Verdict), res.Summary, err
}

// linTimeout bounds one porcupine check; the counter histories here check
// in microseconds, so a check that runs out of time is reported as unknown.
const linTimeout = 10 * time.Second

// linStats count the cross-checks of a hunt.
type linStats struct {
	checked, illegal, unknown int
}

func (s linStats) String() string {
	return fmt.Sprintf("linearizability: %d finished runs checked, %d illegal, %d unknown", s.checked, s.illegal, s.unknown)
}

// crossCheck compares porcupine's verdict on a finished run with the
// model's no-lost-update on the same run: a lost update must be exactly a
// history that is not linearizable as an atomic counter. Either mismatch
// fails the check; the suite reports it rather than loosening either side.
func (h *hunt) crossCheck(t *rapid.T, s *model.State) {
	run, err := model.Replay(&h.d, h.trace)
	if err != nil {
		t.Fatalf("internal error: a drawn schedule does not replay: %v", err)
	}
	verdict, summary, err := linCheck(run)
	if err != nil {
		t.Fatalf("linearizability check failed: %v", err)
	}
	h.lin.checked++
	switch verdict {
	case "unknown":
		h.lin.unknown++
		return
	case "illegal":
		h.lin.illegal++
	}
	if why := linDisagreement(s, verdict, summary); why != "" {
		h.disagree(t, "linearizable", why)
	}
}

// linDisagreement says how porcupine's verdict on a finished run with
// final state s contradicts the model's no-lost-update, or "".
func linDisagreement(s *model.State, verdict, summary string) string {
	lost := s.Store.Counter != s.Store.Accepted
	if verdict == "unknown" || (verdict == "illegal") == lost {
		return ""
	}
	return fmt.Sprintf("porcupine says %q (%s) but the model's no-lost-update says lost=%v (counter %d, %d writes accepted)",
		verdict, summary, lost, s.Store.Counter, s.Store.Accepted)
}

// crossCheckRun is the cross-check on a replayed run (a shrunk schedule),
// if it finished: "" when porcupine agrees with no-lost-update.
func crossCheckRun(r *model.Run) (string, error) {
	if !r.Final.Finished(&r.Design) {
		return "", nil
	}
	verdict, summary, err := linCheck(r)
	if err != nil {
		return "", err
	}
	return linDisagreement(&r.Final, verdict, summary), nil
}
