package reality

import (
	"math/rand/v2"

	"lockcheck/model"
)

// RandomSchedule walks the model from Init, choosing among the enabled
// actions with rng: a fault with faultPercent percent chance when one is
// enabled, else a client step (80% when a tick is enabled too), else the
// tick. It stops at 400 steps, when nothing is enabled, or when every job
// is done. The same design and generator give the same schedule.
func RandomSchedule(d *model.Design, rng *rand.Rand, faultPercent int) []model.Action {
	s := model.Init(d)
	var trace []model.Action
	var buf []model.Action
	for len(trace) < 400 {
		buf = model.Actions(d, &s, buf)
		if len(buf) == 0 {
			break
		}
		var steps, faults []model.Action
		var tick *model.Action
		for k := range buf {
			switch {
			case buf[k].Kind == model.ActTick:
				tick = &buf[k]
			case buf[k].Kind.IsFault():
				faults = append(faults, buf[k])
			default:
				steps = append(steps, buf[k])
			}
		}
		var a model.Action
		switch r := rng.IntN(100); {
		case len(faults) > 0 && r < faultPercent:
			a = faults[rng.IntN(len(faults))]
		case len(steps) > 0 && (tick == nil || r < 80):
			a = steps[rng.IntN(len(steps))]
		case tick != nil:
			a = *tick
		default:
			a = faults[rng.IntN(len(faults))]
		}
		trace = append(trace, a)
		s, _ = model.Step(d, s, a)
		if s.Finished(d) {
			break
		}
	}
	return trace
}
