package explore

import (
	"strings"

	"lockcheck/model"
)

// Verdict kinds: a design's verdict in a word, from its always
// properties and what protects what (model.ClassOf). The data verdict
// comes first: a fenced design whose lock breaks but whose data does not
// is "lock-unsafe, data-safe", not merely "violated".
const (
	VerdictSafe        = "safe within bounds"     // every always property holds, put to the test
	VerdictProbable    = "probably safe"          // as safe, from a bitstate search: not a proof
	VerdictDataSafe    = "lock-unsafe, data-safe" // the lock breaks; every data-safety property holds, put to the test
	VerdictLockUnsafe  = "lock-unsafe"            // the lock breaks; data safety untested (vacuous or undecided or not checked)
	VerdictLosesUpdate = "loses updates"          // a data-safety property is violated
	VerdictStuck       = "stuck"                  // no safety property is violated; progress is
	VerdictUnfair      = "unfair"                 // no safety or liveness property is violated; bypass (fairness) is
	VerdictVacuous     = "holds only vacuously"   // nothing is violated, but some property holds only because no fault reached it
	VerdictIncomplete  = "incomplete"             // nothing is violated, but a bound stopped the search first
)

// Summary is a design's verdict in one line.
type Summary struct {
	Verdict string // one of the Verdict kinds
	// Text says which properties make the verdict: "exclusive, mutex
	// violated (lock safety); no-lost-update holds, put to the test (data
	// safety)".
	Text string
}

// Summarize is the verdict of a report's always properties.
func Summarize(rep *Report) Summary {
	var violated, vacuous, incomplete, probable []string
	byClass := map[model.Class][]string{} // violated, per class
	dataHeld, dataVacuous, dataOther := []string{}, []string{}, []string{}
	for _, r := range rep.Results {
		if r.Expect != model.Always {
			continue
		}
		cl := model.ClassOf(r.Property)
		switch r.Status {
		case Violated:
			violated = append(violated, r.Property)
			byClass[cl] = append(byClass[cl], r.Property)
		case Holds, HoldsProbably:
			if r.Vacuous != "" {
				vacuous = append(vacuous, r.Property)
			}
			if r.Status == HoldsProbably {
				probable = append(probable, r.Property)
			}
			if cl == model.DataSafety {
				if r.Vacuous != "" {
					dataVacuous = append(dataVacuous, r.Property)
				} else {
					dataHeld = append(dataHeld, r.Property)
				}
			}
		default:
			incomplete = append(incomplete, r.Property)
			if cl == model.DataSafety {
				dataOther = append(dataOther, r.Property)
			}
		}
	}
	join := func(xs []string) string { return strings.Join(xs, ", ") }
	var parts []string
	if v := byClass[model.DataSafety]; len(v) > 0 {
		parts = append(parts, join(v)+" violated (data safety)")
	}
	if len(dataHeld) > 0 {
		parts = append(parts, join(dataHeld)+" holds, put to the test (data safety)")
	}
	if len(dataVacuous) > 0 && len(violated) > 0 {
		parts = append(parts, join(dataVacuous)+" holds only vacuously (data safety)")
	}
	if v := byClass[model.LockSafety]; len(v) > 0 {
		parts = append(parts, join(v)+" violated (lock safety)")
	}
	if v := byClass[model.Liveness]; len(v) > 0 {
		parts = append(parts, join(v)+" violated (liveness)")
	}
	if v := byClass[model.Fairness]; len(v) > 0 {
		parts = append(parts, join(v)+" violated (fairness)")
	}
	if len(violated) == 0 && len(vacuous) > 0 {
		parts = append(parts, join(vacuous)+" only vacuously: no fault of the budget reached them")
	}
	if len(incomplete) > 0 {
		parts = append(parts, join(incomplete)+" undecided")
	}
	s := Summary{Text: strings.Join(parts, "; ")}
	switch {
	case len(byClass[model.DataSafety]) > 0:
		s.Verdict = VerdictLosesUpdate
	case len(byClass[model.LockSafety]) > 0 && len(dataHeld) > 0 && len(dataVacuous) == 0 && len(dataOther) == 0:
		s.Verdict = VerdictDataSafe
	case len(byClass[model.LockSafety]) > 0:
		s.Verdict = VerdictLockUnsafe
	case len(byClass[model.Liveness]) > 0:
		s.Verdict = VerdictStuck
	case len(violated) > 0:
		s.Verdict = VerdictUnfair
	case len(incomplete) > 0:
		s.Verdict = VerdictIncomplete
	case len(vacuous) > 0:
		s.Verdict = VerdictVacuous
	case len(probable) > 0:
		s.Verdict = VerdictProbable
	default:
		s.Verdict = VerdictSafe
		s.Text = "every property holds, put to the test"
	}
	return s
}
