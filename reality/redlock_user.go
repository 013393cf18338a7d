package reality

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"lockcheck/model"
)

// A user's Redlock client (package locktest's locktest.Redlock) asks the
// nodes itself: one Acquire sends its SET NX PX to every node, at once (as
// redsync does, a goroutine per node) or one after another in the nodes'
// order, through a proxy of its own to each (UserTarget.Addrs). The model
// asks one node per acquire step, node 1 first, and other steps may come
// between two nodes of one attempt: another client's SET, a tick, a pause
// of this client. The rule that plays that for real, the per-node order:
//
//   - a request of the client to node k reaches node k at the attempt's
//     step for node k, not before: the attempt's first step closes the
//     client's proxies to nodes 2 … N (their requests wait there, apart
//     from a pause's hold: proxy.gated) and starts Acquire in a goroutine
//     of the client's own, whose context ends when the run does;
//   - the step for node k opens node k's proxy with its replies held,
//     waits until node k has answered (the reply reaches the proxy), and
//     its answer is node k's key as the observer sees it then: the
//     client's (OK) or not (refused); then the reply goes on to the client;
//   - the last node's step then waits for Acquire to return: its word is
//     the attempt's decision (Obs.Won, next to the model's: won with a
//     majority of the votes and validity left), and a lost attempt's
//     unlocks are the client's own (none are sent for it).
//
// A user's Release answers what redsync's Unlock answers: whether it
// deleted its key on a majority of the nodes (the model's release says
// whether it did on any): the model's side of a release step is read so
// (userRedlockView).
//
// So the nodes hold what the model's nodes hold after every step, an
// attempt cut by other steps included. A client's per-node timeout must
// outlast a node held that long (redsync: WithTimeoutFactor); a client
// that asks the nodes in another order waits on a node not yet let
// through, and the step names the node it waited for.
type redlockUser struct {
	u   userAPI
	h   *netHold
	obs *redlockObserver
	ups []string // each node's upstream: its proxy's key in h
	// pending is the running Acquire's answer (nil: none running);
	// answer is it once it came before the last node's step
	pending chan zkAnswer
	answer  *zkAnswer
	won     bool // the last attempt's word (Acquire's won)
	run     context.Context
	stop    context.CancelFunc
	noGate  bool // planted: no node waits for its step (plant.noGate)
}

// redlockUserBound is how long a step waits for node k's answer or for
// Acquire to return (zkUserBound's reasoning: a late answer voids the
// run; one later than this is the client's).
const redlockUserBound = zkUserBound

// userStep is the acquire step for node k of a user's client.
func (l *redlockLock) userStep(ctx context.Context, c *client, k int, ob *Obs) (model.Reply, error) {
	u := l.user
	if k == 0 {
		for n := 1; n < len(u.ups) && !u.noGate; n++ {
			if err := u.h.gate(u.ups[n], true); err != nil {
				return model.Reply{}, err
			}
		}
		u.answer = nil
		if err := u.h.holdReplies(u.ups[0]); err != nil {
			return model.Reply{}, err
		}
		done := make(chan zkAnswer, 1)
		u.pending = done
		api, run := u.u, u.run
		go func() {
			won, _, told, err := api.acquire(run)
			done <- zkAnswer{won, told, err}
		}()
	} else {
		if u.pending == nil && u.answer == nil {
			return model.Reply{}, fmt.Errorf("node %d's step with no Acquire running", k+1)
		}
		if err := u.h.holdReplies(u.ups[k]); err != nil {
			return model.Reply{}, err
		}
		if err := u.h.gate(u.ups[k], false); err != nil {
			return model.Reply{}, err
		}
	}
	asked, err := u.answered(ctx, k)
	if err != nil {
		return model.Reply{}, err
	}
	// node k's key as the observer sees it, before the client hears
	v, gerr := u.obs.nodes[k].Get(ctx, LockKey).Result()
	if gerr != nil && !errors.Is(gerr, redis.Nil) {
		return model.Reply{}, fmt.Errorf("observer GET %s on node %d: %v", LockKey, k+1, gerr)
	}
	u.h.proxies[u.ups[k]].resumeReplies()
	ob.Result = model.ResRefused
	if holderOf(v, gerr, l.d.Clients) == c.i {
		ob.Result = model.ResOK
	}
	ob.Told = fmt.Sprintf("(Acquire running: node %d answered)", k+1)
	if !asked {
		ob.Told = fmt.Sprintf("(Acquire returned before node %d answered)", k+1)
	}
	r := model.Reply{Result: ob.Result, Node: uint8(k)}
	if k+1 < l.d.Nodes {
		return r, nil
	}
	a, err := u.returned(ctx)
	if err != nil {
		return model.Reply{}, err
	}
	ob.Told, u.won = a.told, a.won
	if a.won { // its word decides, with the votes the nodes gave
		r.Left = 1
	}
	return r, nil
}

// answered waits until node k has answered the client (its reply is held
// at the proxy: true) or Acquire has returned (false).
func (u *redlockUser) answered(ctx context.Context, k int) (bool, error) {
	got := u.h.proxies[u.ups[k]].got
	t := time.NewTimer(redlockUserBound)
	defer t.Stop()
	for {
		if u.answer != nil {
			select { // a reply held meanwhile counts
			case <-got:
				return true, nil
			default:
				return false, nil
			}
		}
		select {
		case <-got:
			return true, nil
		case a := <-u.pending:
			u.pending, u.answer = nil, &a
		case <-t.C:
			return false, fmt.Errorf("your lock's Acquire neither asked node %d (Target.Addrs[%d]) nor returned within %v: a Redlock Acquire asks every node, at once or in the nodes' order", k+1, k, redlockUserBound)
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// returned waits for Acquire's answer.
func (u *redlockUser) returned(ctx context.Context) (zkAnswer, error) {
	if u.answer == nil {
		t := time.NewTimer(redlockUserBound)
		defer t.Stop()
		select {
		case a := <-u.pending:
			u.answer = &a
		case <-t.C:
			return zkAnswer{}, fmt.Errorf("your lock's Acquire did not return within %v of the last node's answer", redlockUserBound)
		case <-ctx.Done():
			return zkAnswer{}, ctx.Err()
		}
	}
	a := *u.answer
	u.pending, u.answer = nil, nil
	if a.err != nil {
		return zkAnswer{}, a.err
	}
	return a, nil
}

// userWon is the word of a user's client on the attempt an acquire step
// ended (ok false: not a user's client, or not an attempt's last step).
func (l *redlockLock) userWon(node int) (won, ok bool) {
	if l.user == nil || node+1 != l.d.Nodes {
		return false, false
	}
	return l.user.won, true
}

// userRedlockView is the model's view of a step as a user's Redlock client
// answers it: a release is OK when it deleted the client's key on a
// majority of the nodes (redsync's Unlock), not on any.
func userRedlockView(d *model.Design, st *model.StepRecord, v view) view {
	if k := st.Action.Kind; k != model.ActRelease && k != model.ActDel || st.Event.Result != model.ResOK && st.Event.Result != model.ResNoop {
		return v
	}
	me, n := st.Action.Client+1, 0
	for k := 0; k < d.Nodes; k++ {
		if st.Before.Nodes[k].Owner == me && st.After.Nodes[k].Owner == 0 {
			n++
		}
	}
	v.Result = model.ResNoop
	if n >= redlockMajority(d) {
		v.Result = model.ResOK
	}
	return v
}

// redlockKeyGone reports whether client i's key was on a node in the look
// before (nodesText's words) and is gone from it, the node up, in the
// look after: an expiry, when nobody acted between the two.
func redlockKeyGone(before, after string, i int) bool {
	c := model.ClientName(i)[0]
	for k := 0; k < len(before) && k < len(after); k++ {
		if before[k] == c && after[k] != c && after[k] != 'x' {
			return true
		}
	}
	return false
}
