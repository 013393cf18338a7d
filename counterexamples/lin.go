package counterexamples

import (
	"strings"

	"lockcheck/linearizability"
	"lockcheck/model"
)

// linResult is what a counterexample file shows of the linearizability
// checks: the text of its section and porcupine's page for the job
// history (nil: none).
type linResult struct {
	Text string
	HTML []byte
}

// checkLinearizability checks the run's job history against an atomic
// counter (with porcupine's page) and its storage operations against what
// the storage promises, listing where storage and lock disagree.
func checkLinearizability(r *model.Run) linResult {
	var b strings.Builder
	var page []byte
	res, err := linearizability.CheckRun(r, linearizability.Options{HTML: true})
	if err != nil {
		b.WriteString("linearizable: not checked (" + err.Error() + ")\n")
	} else {
		b.WriteString(res.Summary + "\n")
		page = res.HTML
	}
	st, err := linearizability.CheckStorage(r, linearizability.Options{})
	if err != nil {
		b.WriteString("storage: not checked (" + err.Error() + ")\n")
		return linResult{Text: b.String(), HTML: page}
	}
	b.WriteString(st.Summary + "\n")
	if len(st.Disagreements) > 1 {
		for _, d := range st.Disagreements {
			b.WriteString("  " + d.Text + "\n")
		}
	}
	return linResult{Text: b.String(), HTML: page}
}
