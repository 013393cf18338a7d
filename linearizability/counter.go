package linearizability

import (
	"fmt"

	"github.com/anishathalye/porcupine"

	"lockcheck/model"
)

// NoFinal, as CheckJobs' final counter, says the final counter is not known:
// no final read is appended to the history.
const NoFinal = -1

// jobCall is a job as porcupine's Input: who called, and what it is.
type jobCall struct {
	Client int
	Final  bool // the final read of the counter, after every job
	Token  int  // token sent with the write (0: none)
}

// jobReturn is what the job got back: porcupine's Output.
type jobReturn struct {
	Outcome model.Outcome
	ReadOK  bool   // the read was accepted (false: the job failed at its read)
	Read    int    // value read; for the final read, the counter
	Ending  string // how the job ended, in words (descriptions only)
}

// counterModel is the counter as the jobs see it. A state is the number of
// increments that took effect (an int). Increments return the value they
// read; an atomic increment reads exactly the count before it and leaves
// count+1. Failed increments have no effect; unknown and pending ones may
// or may not have one (the nondeterministic step returns both states). A
// pending job is one the trace cut short; as in the usual definition of
// linearizability, a call without a reply may be completed or dropped.
// In today's model a pending job has not sent its write, so it never
// lands; on the model's runs the two readings agree: a run that fits no
// order without the landing has lost an update, so its final counter is
// below its successful increments, and no landing lowers a count.
var counterModel = (&porcupine.NondeterministicModel{
	Init: func() []any { return []any{0} },
	Step: func(state, input, output any) []any {
		n := state.(int)
		call, ret := input.(jobCall), output.(jobReturn)
		if call.Final {
			if n == ret.Read {
				return []any{n}
			}
			return nil
		}
		switch ret.Outcome {
		case model.OutcomeOK:
			if n == ret.Read {
				return []any{n + 1}
			}
			return nil
		case model.OutcomeRead: // a reader's job: a read of the counter
			if n == ret.Read {
				return []any{n}
			}
			return nil
		case model.OutcomeUnknown, model.OutcomePending:
			// If the write lands, it sets the counter to read+1: an atomic
			// increment only if the count was read. Landing at any other
			// count is a lost update; later reads or the final read see it.
			if ret.ReadOK && n == ret.Read {
				return []any{n, n + 1}
			}
			return []any{n}
		default: // failed: no effect, linearizable anywhere
			return []any{n}
		}
	},
	Equal: func(a, b any) bool { return a.(int) == b.(int) },
	Hash:  func(s any) uint64 { return uint64(s.(int)+1) * 0x9E3779B97F4A7C15 },
	DescribeOperation: func(input, output any) string {
		return describeJob(input.(jobCall), output.(jobReturn))
	},
	DescribeState: func(s any) string { return fmt.Sprintf("counter %d", s.(int)) },
	DescribeOperationMetadata: func(info any) string {
		if info == nil {
			return ""
		}
		return info.(string)
	},
}).ToModel()

// clientName is A, B, … for the model's clients, c26, c27, … past Z.
func clientName(i int) string {
	if i >= 0 && i < 26 {
		return model.ClientName(i)
	}
	return fmt.Sprintf("c%d", i)
}

func tokenNote(tok int) string {
	if tok == 0 {
		return ""
	}
	return fmt.Sprintf(" (token %d)", tok)
}

// describeJob is one job in words: "A: read 0 → write 1 (token 33) accepted".
func describeJob(call jobCall, ret jobReturn) string {
	if call.Final {
		return fmt.Sprintf("final: counter = %d", ret.Read)
	}
	s := clientName(call.Client) + ": "
	if !ret.ReadOK {
		return s + ret.Ending
	}
	return fmt.Sprintf("%sread %d → %s", s, ret.Read, ret.Ending)
}

// ending is how a job ended, in words, from the job alone; jobEnding refines
// it with the run's steps (why a write was rejected, a crash).
func ending(j *model.Job) string {
	w := fmt.Sprintf("write %d%s", j.Read+1, tokenNote(j.Token))
	switch j.Outcome {
	case model.OutcomeOK:
		return w + " accepted"
	case model.OutcomeUnknown:
		return w + " sent, then crashed: outcome unknown"
	case model.OutcomePending:
		return "(the trace ended before its write)"
	case model.OutcomeRead:
		return "no write (a reader)"
	}
	if !j.ReadOK {
		return "read rejected"
	}
	return w + " failed (no effect)"
}

// jobEnding is ending, told from the run's step that ended the job.
func jobEnding(r *model.Run, j *model.Job) string {
	if j.Outcome != model.OutcomeFailed || j.ReturnSeq < 1 || j.ReturnSeq > len(r.Steps) {
		return ending(j)
	}
	st := &r.Steps[j.ReturnSeq-1]
	ev := &st.Event
	refusal := refusalText(r.Design.Storage, int(ev.Token), int(ev.MaxTok))
	switch st.Action.Kind {
	case model.ActCrash:
		return "crashed before writing (no effect)"
	case model.ActRead:
		return "read" + tokenNote(int(ev.Token)) + " " + refusal
	case model.ActWrite:
		return fmt.Sprintf("write %d%s %s", ev.Value, tokenNote(int(ev.Token)), refusal)
	}
	return ending(j)
}

// validateJob reports the first thing wrong with job k, or nil.
func validateJob(k int, j *model.Job) error {
	who := fmt.Sprintf("job %d", k)
	if j.Client >= 0 && j.Client <= maxClient {
		who += " (" + clientName(j.Client) + ")"
	}
	switch {
	case j.Client < 0 || j.Client > maxClient:
		return fmt.Errorf("%s: client %d: want 0 to %d", who, j.Client, maxClient)
	case j.Outcome > model.OutcomeRead:
		return fmt.Errorf("%s: outcome %d: want ok, failed, unknown, pending or read", who, j.Outcome)
	case j.CallSeq < 1:
		return fmt.Errorf("%s: call step %d: want 1 or more", who, j.CallSeq)
	case j.Read < 0:
		return fmt.Errorf("%s: read %d: want 0 or more", who, j.Read)
	case j.Token < 0:
		return fmt.Errorf("%s: token %d: want 0 or more", who, j.Token)
	case !j.ReadOK && j.Outcome != model.OutcomeFailed:
		return fmt.Errorf("%s: %s but its read was rejected: a job whose read was rejected failed", who, j.Outcome)
	case j.Outcome == model.OutcomeOK && j.Wrote != j.Read+1:
		return fmt.Errorf("%s: ok, read %d but wrote %d: an increment writes read+1", who, j.Read, j.Wrote)
	case (j.Outcome == model.OutcomeOK || j.Outcome == model.OutcomeFailed || j.Outcome == model.OutcomeRead) && j.ReturnSeq < j.CallSeq:
		return fmt.Errorf("%s: returns at step %d before its call at step %d", who, j.ReturnSeq, j.CallSeq)
	case j.Outcome == model.OutcomeUnknown && j.ReturnSeq != 0 && j.ReturnSeq < j.CallSeq:
		return fmt.Errorf("%s: unknown outcome, last step its write could land %d is before its call at step %d (0: the end)", who, j.ReturnSeq, j.CallSeq)
	}
	return nil
}

// maxClient bounds client numbers: the visualisation draws a row for every
// number up to the largest.
const maxClient = 1023

// maxSeq bounds step numbers so that end+1 cannot overflow and the
// visualisation's timestamps stay exact.
const maxSeq = 1 << 40

// jobHistory turns jobs into porcupine operations: one per job, then the
// final read (unless final is NoFinal) one step after everything. endings
// tells each job's ending (nil: from the job alone); end is the history's
// last step (0: the largest step among the jobs).
func jobHistory(jobs []model.Job, final int, end int, endings func(*model.Job) string) ([]porcupine.Operation, error) {
	if final < NoFinal {
		return nil, fmt.Errorf("final counter %d: want 0 or more, or NoFinal (-1)", final)
	}
	for k := range jobs {
		if err := validateJob(k, &jobs[k]); err != nil {
			return nil, err
		}
		if jobs[k].CallSeq > maxSeq || jobs[k].ReturnSeq > maxSeq {
			return nil, fmt.Errorf("job %d: step numbers up to %d allowed", k, maxSeq)
		}
		end = max(end, jobs[k].CallSeq, jobs[k].ReturnSeq)
	}
	if endings == nil {
		endings = ending
	}
	ops := make([]porcupine.Operation, 0, len(jobs)+1)
	lastClient := -1
	for k := range jobs {
		j := &jobs[k]
		ret := int64(j.ReturnSeq)
		switch j.Outcome {
		case model.OutcomePending:
			ret = int64(end)
		case model.OutcomeUnknown:
			if ret == 0 {
				ret = int64(end)
			}
		}
		lastClient = max(lastClient, j.Client)
		ops = append(ops, porcupine.Operation{
			ClientId: j.Client,
			Input:    jobCall{Client: j.Client, Token: j.Token},
			Call:     int64(j.CallSeq),
			Output:   jobReturn{Outcome: j.Outcome, ReadOK: j.ReadOK, Read: j.Read, Ending: endings(j)},
			Return:   ret,
			Metadata: jobMetadata(j, ret),
		})
	}
	if final != NoFinal {
		ops = append(ops, porcupine.Operation{
			ClientId: lastClient + 1,
			Input:    jobCall{Client: lastClient + 1, Final: true},
			Call:     int64(end) + 1,
			Output:   jobReturn{Outcome: model.OutcomeOK, ReadOK: true, Read: final},
			Return:   int64(end) + 1,
			Metadata: finalMetadata,
		})
	}
	return ops, nil
}

func jobMetadata(j *model.Job, ret int64) string {
	s := fmt.Sprintf("%s, steps %d → %d", j.Outcome, j.CallSeq, ret)
	if j.CallTick > 0 && j.ReturnTick >= j.CallTick {
		s += fmt.Sprintf(", t=%d → t=%d", j.CallTick, j.ReturnTick)
	}
	return s
}

// refusalText says why the storage refused a request with token tok when the
// highest token it had seen was maxTok.
func refusalText(mode model.StorageMode, tok, maxTok int) string {
	switch mode {
	case model.StorageCAS:
		return "rejected: version changed"
	case model.StorageCondUpdate:
		return fmt.Sprintf("rejected: %d ≤ %d", tok, maxTok)
	}
	return fmt.Sprintf("rejected: %d < %d", tok, maxTok)
}

// finalMetadata is the metadata of the final read's operation.
const finalMetadata = "the counter read after every job"
