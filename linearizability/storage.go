package linearizability

import (
	"errors"
	"fmt"
	"strings"

	"github.com/anishathalye/porcupine"

	"lockcheck/model"
)

// storageCall is one request the storage answered (porcupine's Input).
type storageCall struct {
	Client  int
	Write   bool
	Check   bool // fence-check=two-step: a write's token check (Write too), the write itself a later call
	Token   int  // token sent (0: none)
	Value   int  // write: the value written
	Version int  // write: the version the client read (storage=cas)
	// Not part of the storage's spec: where the request stands with the
	// lock, for descriptions and Disagreements.
	Holder int // the key's holder when the storage answered, -1 nobody
	Tick   int
}

// storageReturn is the storage's answer (porcupine's Output).
type storageReturn struct {
	Accepted bool
	Value    int // read: the counter
	Version  int // read: the version (storage=cas)
	MaxTok   int // rejected: the highest token the storage said it had seen
}

// storageState is what the storage remembers.
type storageState struct {
	Counter int
	Version int // version column (storage=cas)
	MaxTok  int // highest token seen (last_token for cond-update)
}

// storageSpec is what the storage mode promises (DESIGN.md, "Storage"):
// whether it accepts call in state st, and the state after it does. A
// request without a token (fence=none, or a read under fence=write) is
// not checked against tokens.
//
//   - plain accepts everything.
//   - max-token refuses a token below the highest seen, reads included, and
//     records every token it sees.
//   - max-write refuses a token below the highest seen, and records only
//     the tokens of writes it accepts.
//   - cond-update (UPDATE … WHERE last_token < t) needs a strictly greater
//     token to write; reads are plain SELECTs.
//   - cas accepts a write only if the version is still the one the client
//     read, and bumps the version.
func storageSpec(mode model.StorageMode, st storageState, c storageCall) (bool, storageState) {
	next := st
	tok := c.Token
	if !c.Write {
		switch mode {
		case model.StorageMaxToken:
			if tok != 0 {
				if tok < st.MaxTok {
					return false, st
				}
				next.MaxTok = max(st.MaxTok, tok)
			}
		case model.StorageMaxWrite:
			if tok != 0 && tok < st.MaxTok {
				return false, st
			}
		}
		return true, next
	}
	switch mode {
	case model.StorageMaxToken, model.StorageMaxWrite:
		if tok != 0 {
			if tok < st.MaxTok {
				return false, st
			}
			next.MaxTok = max(st.MaxTok, tok)
		}
		if c.Check { // the check records the token and writes nothing
			return true, next
		}
	case model.StorageCondUpdate:
		if tok != 0 {
			if tok <= st.MaxTok {
				return false, st
			}
			next.MaxTok = tok
		}
	case model.StorageCAS:
		if c.Version != st.Version {
			return false, st
		}
		next.Version++
	}
	next.Counter = c.Value
	return true, next
}

// tokenChecking reports whether the mode refuses by token (and so reports
// the highest token it has seen when it refuses).
func tokenChecking(mode model.StorageMode) bool {
	return mode == model.StorageMaxToken || mode == model.StorageMaxWrite || mode == model.StorageCondUpdate
}

// promise is what the design says the storage does: its mode, and which
// requests carry the client's token (the fence mode).
type promise struct {
	mode  model.StorageMode
	fence model.FenceMode
}

func (p promise) String() string {
	return p.mode.String() + " storage with fence=" + p.fence.String()
}

// tokenRule checks that the request carries a token exactly when the
// fence mode sends one; "" if it does.
func (p promise) tokenRule(c storageCall) string {
	want := p.fence == model.FenceRW || (p.fence == model.FenceWrite && c.Write)
	switch {
	case want && c.Token == 0:
		return "carries no token, but fence=" + p.fence.String() + " sends one"
	case !want && c.Token != 0 && p.fence == model.FenceNone:
		return fmt.Sprintf("carries token %d, but fence=none sends no token", c.Token)
	case !want && c.Token != 0:
		return fmt.Sprintf("carries token %d, but fence=%s sends tokens with writes only", c.Token, p.fence)
	}
	return ""
}

// storageFits reports whether the storage may answer ret to call in state
// st, and the state after; why says what does not fit.
func storageFits(p promise, st storageState, call storageCall, ret storageReturn) (ok bool, next storageState, why string) {
	if why := p.tokenRule(call); why != "" {
		return false, st, why
	}
	mode := p.mode
	accept, next := storageSpec(mode, st, call)
	switch {
	case ret.Accepted && !accept && mode == model.StorageCAS:
		return false, st, fmt.Sprintf("accepted, but the version was %d, not %d", st.Version, call.Version)
	case ret.Accepted && !accept:
		return false, st, fmt.Sprintf("accepted, but the storage had seen token %d", st.MaxTok)
	case !ret.Accepted && accept:
		return false, st, "rejected, but " + mode.String() + " storage accepts it"
	case ret.Accepted && !call.Write && ret.Value != st.Counter:
		return false, st, fmt.Sprintf("returned %d, but the counter was %d", ret.Value, st.Counter)
	case ret.Accepted && !call.Write && mode == model.StorageCAS && ret.Version != st.Version:
		return false, st, fmt.Sprintf("returned version %d, but the version was %d", ret.Version, st.Version)
	case !ret.Accepted && tokenChecking(mode) && ret.MaxTok != st.MaxTok:
		return false, st, fmt.Sprintf("refused citing token %d, but the highest seen was %d", ret.MaxTok, st.MaxTok)
	}
	if !ret.Accepted {
		return true, st, ""
	}
	return true, next, ""
}

// storageModel is the storage a design promises, as a porcupine model.
func storageModel(p promise) porcupine.Model {
	mode := p.mode
	return porcupine.Model{
		Init: func() any { return storageState{} },
		Step: func(state, input, output any) (bool, any) {
			ok, next, _ := storageFits(p, state.(storageState), input.(storageCall), output.(storageReturn))
			return ok, next
		},
		Hash: func(s any) uint64 {
			st := s.(storageState)
			return (uint64(st.Counter)*31+uint64(st.Version))*0x9E3779B97F4A7C15 ^ uint64(st.MaxTok)
		},
		DescribeOperation: func(input, output any) string {
			return describeStorageOp(mode, input.(storageCall), output.(storageReturn))
		},
		DescribeState: func(s any) string {
			st := s.(storageState)
			out := fmt.Sprintf("counter %d", st.Counter)
			if mode == model.StorageCAS {
				out += fmt.Sprintf(", version %d", st.Version)
			}
			if tokenChecking(mode) {
				out += fmt.Sprintf(", highest token %d", st.MaxTok)
			}
			return out
		},
	}
}

// describeStorageOp is "A: write 1 (token 33) → rejected: 33 < 34  ✗ the key is B's".
func describeStorageOp(mode model.StorageMode, c storageCall, r storageReturn) string {
	s := clientName(c.Client) + ": " + requestText(c) + " → "
	switch {
	case !r.Accepted:
		s += refusalText(mode, c.Token, r.MaxTok)
	case c.Check:
		s += "passed"
	case c.Write:
		s += "accepted"
	default:
		s += fmt.Sprint(r.Value)
	}
	return s + lockNote(c)
}

func requestText(c storageCall) string {
	if c.Check {
		return fmt.Sprintf("token check for write %d%s", c.Value, tokenNote(c.Token))
	}
	if c.Write {
		return fmt.Sprintf("write %d%s", c.Value, tokenNote(c.Token))
	}
	return "read" + tokenNote(c.Token)
}

// lockNote is the seed's ✗ when the client does not hold the key.
func lockNote(c storageCall) string {
	switch {
	case c.Holder == c.Client:
		return ""
	case c.Holder < 0:
		return "  ✗ no key"
	}
	return "  ✗ the key is " + clientName(c.Holder) + "'s"
}

// Disagreement is a storage operation on which the storage and the lock
// disagree: the storage accepted a request from a client that did not hold
// the key (the lock said no, the storage yes: a late write lands), or
// refused one from the client that held it.
type Disagreement struct {
	Seq, Tick int
	Client    int
	Write     bool
	Accepted  bool // the storage's answer
	Holder    int  // the key's holder (-1: nobody); the lock's answer is Holder == Client
	Text      string
}

// StorageResult is the storage checked against its own spec, and where it
// disagrees with the lock.
type StorageResult struct {
	Result        // the storage against what its mode promises
	Disagreements []Disagreement
}

// storageHistory is the run's storage operations, one per read or write
// step; each is answered at once, so Call = Return = the step.
func storageHistory(r *model.Run) []porcupine.Operation {
	var ops []porcupine.Operation
	for k := range r.Steps {
		st := &r.Steps[k]
		a := st.Action
		// a read or write as the storage saw it: also a held one when it
		// arrives, a stray first copy, one whose reply was lost; not one
		// that a partition kept from the storage, nor the step that sent
		// a held one
		kind := model.RequestKind(&r.Design, st)
		// fence-check=two-step: the write's token check is a call of its
		// own (a refused one a refused write), the apply the write, held
		// to the spec as any write
		check := kind == model.ActWrite && r.Design.FenceCheck == model.FenceCheckTwoStep
		if kind == model.ActApply {
			kind = model.ActWrite
		}
		if (kind != model.ActRead && kind != model.ActWrite) || a.Kind == model.ActDelay || st.Event.Result == model.ResUnreachable {
			continue
		}
		ev := &st.Event
		i := int(a.Client)
		call := storageCall{Client: i, Write: kind == model.ActWrite, Check: check, Token: int(ev.Token),
			Holder: int(ev.Other) - 1, Tick: int(ev.Now)}
		if r.Design.Readers > 0 && !call.Write && model.SafeRead(&r.Design, &st.Before, i) {
			call.Holder = i // readers share the lock: the queue's head is one holder of several
		}
		ret := storageReturn{Accepted: ev.Result == model.ResAccepted || check && ev.Result == model.ResOK}
		if call.Write {
			call.Value, call.Version = int(ev.Value), int(st.Before.Clients[i].Version)
		} else if ret.Accepted {
			ret.Value, ret.Version = int(ev.Value), int(st.Before.Store.Version) // (a lost reply's client never saw it)
		}
		if !ret.Accepted {
			ret.MaxTok = int(ev.MaxTok)
		}
		ops = append(ops, porcupine.Operation{ClientId: i, Input: call, Output: ret,
			Call: int64(st.Seq), Return: int64(st.Seq), Metadata: fmt.Sprintf("t=%d, step %d", ev.Now, st.Seq)})
	}
	return ops
}

// CheckStorage checks the run's storage operations against what the
// design's storage mode promises, and lists where storage and lock
// disagree.
func CheckStorage(r *model.Run, opts Options) (StorageResult, error) {
	if r == nil {
		return StorageResult{}, errors.New("linearizability: no run to check (nil)")
	}
	if opts.Timeout < 0 {
		return StorageResult{}, fmt.Errorf("linearizability: timeout %v: want 0 (no limit) or more", opts.Timeout)
	}
	p := promise{r.Design.Storage, r.Design.Fence}
	m := storageModel(p)
	ops := storageHistory(r)
	var res porcupine.CheckResult
	var info porcupine.LinearizationInfo
	if opts.HTML {
		res, info = porcupine.CheckOperationsVerbose(m, ops, opts.Timeout)
	} else {
		res = porcupine.CheckOperationsTimeout(m, ops, opts.Timeout)
	}
	out := StorageResult{Result: Result{Verdict: verdictOf(res)}}
	out.Disagreements = disagreements(ops)
	switch out.Verdict {
	case Ok:
		out.Summary = "storage: keeps its promise as " + p.String() + " (" + storageCounts(ops) + "); " + agreeText(out.Disagreements)
	case Unknown:
		out.Summary = fmt.Sprintf("storage: unknown (no verdict within %v)", opts.Timeout)
	case Illegal:
		out.Summary = "storage: breaks its promise as " + p.String() + " (" + explainStorage(p, ops) + ")"
	}
	if opts.HTML {
		html, err := render(m, info, runAnnotations(r), "lockcheck storage: "+r.Design.Name())
		if err != nil {
			return StorageResult{}, err
		}
		out.HTML = html
	}
	return out, nil
}

func disagreements(ops []porcupine.Operation) []Disagreement {
	var out []Disagreement
	for _, op := range ops {
		c, r := op.Input.(storageCall), op.Output.(storageReturn)
		holds := c.Holder == c.Client
		if r.Accepted == holds {
			continue
		}
		who := possessive(c)
		text := fmt.Sprintf("t=%d %s accepted while ", c.Tick, who)
		switch {
		case !r.Accepted:
			text = fmt.Sprintf("t=%d %s rejected although %s holds the key", c.Tick, who, clientName(c.Client))
		case c.Holder < 0:
			text += "nobody holds the key"
		default:
			text += "the key is " + clientName(c.Holder) + "'s"
		}
		out = append(out, Disagreement{Seq: int(op.Call), Tick: c.Tick, Client: c.Client, Write: c.Write,
			Accepted: r.Accepted, Holder: c.Holder, Text: text})
	}
	return out
}

// possessive is "A's write of 1 (token 33)", "B's read (token 34)".
func possessive(c storageCall) string {
	return clientName(c.Client) + "'s " + strings.Replace(requestText(c), "write", "write of", 1)
}

func storageCounts(ops []porcupine.Operation) string {
	reads, writes, checks, rejected := 0, 0, 0, 0
	for _, op := range ops {
		if c := op.Input.(storageCall); c.Check {
			checks++
		} else if c.Write {
			writes++
		} else {
			reads++
		}
		if !op.Output.(storageReturn).Accepted {
			rejected++
		}
	}
	if checks > 0 {
		return fmt.Sprintf("%s, %s, %s, %d rejected", plural(reads, "read", "reads"), plural(checks, "token check", "token checks"), plural(writes, "write", "writes"), rejected)
	}
	return fmt.Sprintf("%s, %s, %d rejected", plural(reads, "read", "reads"), plural(writes, "write", "writes"), rejected)
}

func agreeText(ds []Disagreement) string {
	if len(ds) == 0 {
		return "lock and storage agree"
	}
	s := "lock and storage disagree " + plural(len(ds), "time", "times") + ": " + ds[0].Text
	if len(ds) > 1 {
		s += fmt.Sprintf(" (and %d more)", len(ds)-1)
	}
	return s
}

// explainStorage replays the operations in order (each is one step, so the
// order is total) and tells the first the spec does not allow.
func explainStorage(p promise, ops []porcupine.Operation) string {
	st := storageState{}
	for _, op := range ops {
		c, r := op.Input.(storageCall), op.Output.(storageReturn)
		ok, next, why := storageFits(p, st, c, r)
		if !ok {
			return fmt.Sprintf("t=%d %s %s", c.Tick, possessive(c), why)
		}
		st = next
	}
	return "no order of the storage operations fits its spec"
}
