package reality

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"lockcheck/model"
)

// A user's client of a ZooKeeper lock (package locktest's
// locktest.ZooKeeper): its own session and its own recipe, under the lock
// node zkDir, which it must create its ephemeral sequential node in with
// the data UserTarget.Value (go-zookeeper's Lock.LockWithData), so that the
// observer tells whose node it sees; the node's name is the recipe's own
// (go-zookeeper's: _c_<GUID>-lock-<sequence>), its sequence the last ten
// digits of it. A recipe's Lock blocks until its node is the lowest, so the
// user's Acquire runs in a goroutine of the client's own:
//
//   - the first acquire step of a Lock starts Acquire and waits until it
//     has returned (the lock: OK, or a refusal) or
//     the client's node is seen in the queue, not the lowest (it waits:
//     refused); the token is the node's place in the order of the run's
//     nodes (the model counts creates; a sequence counts deletes too);
//   - each later acquire step (the model's watch firing) waits for that
//     Acquire to return (an answer after the tick's window voids the run,
//     as any late step does); one that returned false (its
//     session expired while it waited) is over, and the step starts
//     another, as the model's client creates a new node.
//
// No fillers are created under the lock node (a recipe parses every
// child's name: go-zookeeper's parseSeq fails on anything else), so the
// tokens are counted from the design's first token by that order.

// zkUserConn is a user's client's ZooKeeper lock.
type zkUserConn struct {
	redisStore
	w       *zkWorld
	d       *model.Design
	i       int
	user    lockAPI
	pending chan zkAnswer   // a running Acquire's answer (nil: none running)
	run     context.Context // a running Acquire's context: it ends at close
	stop    context.CancelFunc
}

type zkAnswer struct {
	won  bool
	told string
	err  error
}

// zkSeen is the sequences of the user's nodes the observer has seen in
// the run, in order: a node's token is its place in it.
type zkSeen struct {
	mu   sync.Mutex
	seqs []int
}

func (s *zkSeen) token(d *model.Design, seq int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := sort.SearchInts(s.seqs, seq)
	if k == len(s.seqs) || s.seqs[k] != seq {
		s.seqs = slicesInsert(s.seqs, k, seq)
	}
	return d.FirstToken + k
}

func slicesInsert(s []int, k, v int) []int {
	s = append(s, 0)
	copy(s[k+1:], s[k:])
	s[k] = v
	return s
}

// zkSeq is a node name's sequence: its last ten digits (ZooKeeper's
// %010d), or false.
func zkSeq(name string) (int, bool) {
	if len(name) < 10 {
		return 0, false
	}
	n, err := strconv.Atoi(name[len(name)-10:])
	return n, err == nil && n >= 0
}

// zkUserQueue is the user's clients' nodes in sequence order, each's
// owner by its data (a client's lock value): (client, sequence).
func zkUserQueue(c *zk.Conn, clients int) ([][2]int, error) {
	kids, _, err := c.Children(zkDir)
	if err != nil {
		return nil, fmt.Errorf("ZooKeeper children of %s: %v", zkDir, err)
	}
	var q [][2]int
	for _, k := range kids {
		seq, ok := zkSeq(k)
		if !ok {
			continue
		}
		data, _, err := c.Get(zkDir + "/" + k)
		if errors.Is(err, zk.ErrNoNode) { // gone since the list
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("ZooKeeper get %s/%s: %v", zkDir, k, err)
		}
		h := HolderUnknown
		for i := 0; i < clients; i++ {
			if string(data) == model.LockValue(i) {
				h = i
			}
		}
		q = append(q, [2]int{h, seq})
	}
	sort.Slice(q, func(a, b int) bool { return q[a][1] < q[b][1] })
	return q, nil
}

// userLock makes client i's lock with the user's maker (go-zookeeper's
// recipe: newZkRecipe), its session through its proxy via.
func (w *zkWorld) userLock(ctx context.Context, st redisStore, i int, via string) (realLock, error) {
	maker := w.opts.User
	if w.opts.Client == ClientZkLock {
		maker = newZkRecipe
	}
	if maker == nil {
		st.closeStore()
		return nil, fmt.Errorf("client %s: Options.User is nil", ClientUser)
	}
	u, err := maker(ctx, UserTarget{Client: i, Addr: via, Key: zkDir, Value: model.LockValue(i), TTL: zkSession(w.d, w.opts.Tick)})
	if err != nil {
		st.closeStore()
		return nil, err
	}
	run, stop := context.WithCancel(context.Background())
	return &zkUserConn{redisStore: st, w: w, d: w.d, i: i, user: userAPI{u: u}, run: run, stop: stop}, nil
}

func (l *zkUserConn) connect(ctx context.Context) error { return l.connectStore(ctx, l.i) }

func (l *zkUserConn) close() {
	l.stop()
	l.user.close() // a blocked Acquire returns when its session closes
	l.closeStore()
}

func (l *zkUserConn) crashed(c *client) { userCrashed(c) }

func (l *zkUserConn) unlock(context.Context, *client, uint8) error { return nil }

func (l *zkUserConn) incr(context.Context, *Obs) (model.Reply, error) {
	return model.Reply{}, errors.New("a ZooKeeper lock's token is its node's sequence: no INCR")
}

func (l *zkUserConn) expire(context.Context, *Obs) (model.Reply, error) {
	return model.Reply{}, errors.New("a ZooKeeper lock has no EXPIRE")
}

func (l *zkUserConn) renew(context.Context, *client, *Obs) (model.Reply, error) {
	return model.Reply{}, errors.New("a ZooKeeper session renews itself: no renewal step")
}

// mine is client i's node in the queue: whether it is there, whether it
// is the lowest, and its sequence.
func (l *zkUserConn) mine() (there, first bool, seq int, err error) {
	q, err := zkUserQueue(l.w.obsC, l.d.Clients)
	if err != nil {
		return false, false, 0, fmt.Errorf("observer: %v", err)
	}
	for k, n := range q {
		if n[0] == l.i {
			return true, k == 0, n[1], nil
		}
	}
	return false, false, 0, nil
}

func (l *zkUserConn) acquire(ctx context.Context, c *client, ob *Obs) (model.Reply, error) {
	if l.pending != nil {
		select {
		case a := <-l.pending: // returned since the last step
			l.pending = nil
			if a.err != nil {
				return model.Reply{}, a.err
			}
			if a.won {
				return l.won(ob, a.told, 0), nil
			}
			// it returned false: its place in the queue is lost (its
			// session expired while it waited); a new Lock starts below
		default:
			return l.waitLock(ctx, c, ob)
		}
	}
	done := make(chan zkAnswer, 1)
	l.pending = done
	u, run := l.user, l.run
	go func() {
		won, _, told, err := u.acquire(run) // it may block: the window bounds the step, close ends it
		done <- zkAnswer{won, told, err}
	}()
	deadline := time.Now().Add(zkUserBound)
	for {
		select {
		case a := <-done:
			l.pending = nil
			if a.err != nil {
				return model.Reply{}, a.err
			}
			tok, err := l.created()
			if err != nil {
				return model.Reply{}, err
			}
			if a.won {
				return l.won(ob, a.told, tok), nil
			}
			ob.Told, ob.Token = a.told, tok
			return wonReply(l.d, false, 0, ob), nil
		default:
		}
		there, first, seq, err := l.mine()
		if err != nil {
			return model.Reply{}, err
		}
		if there && !first { // its node waits behind another's: Lock blocks
			tok := l.w.seen.token(l.d, seq)
			ob.Told, ob.Token = "Acquire blocks: its node waits on its predecessor's", tok
			r := wonReply(l.d, false, 0, ob)
			r.Token = uint16(tok)
			return r, nil
		}
		if time.Now().After(deadline) {
			return model.Reply{}, fmt.Errorf("your lock's Acquire neither returned nor created its node (with the data %q) behind another's within %v", model.LockValue(l.i), zkUserBound)
		}
		select {
		case <-ctx.Done():
			return model.Reply{}, ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// created is the token of the node a finished Acquire created: its
// place in the run's order (0: no node of the client's is there).
func (l *zkUserConn) created() (int, error) {
	there, _, seq, err := l.mine()
	if err != nil || !there {
		return 0, err
	}
	return l.w.seen.token(l.d, seq), nil
}

func (l *zkUserConn) won(ob *Obs, told string, tok int) model.Reply {
	ob.Told, ob.Result, ob.Token = told, model.ResOK, tok
	return model.Reply{Result: model.ResOK, Token: uint16(tok)}
}

// zkUserBound is how long an acquire step waits for the user's Acquire
// (its return, or its node seen behind another's) before it says what
// it saw: an answer after the tick's window voids the run (played again
// with a longer tick, Play.Late), so a loaded machine's slow answer is
// not a difference; one later than this is.
const zkUserBound = 5 * time.Second

// waitLock is a later acquire step: the watch fired, so the Acquire
// running since the first must return (within the window, or the run is
// void).
func (l *zkUserConn) waitLock(ctx context.Context, c *client, ob *Obs) (model.Reply, error) {
	t := time.NewTimer(zkUserBound)
	defer t.Stop()
	select {
	case a := <-l.pending:
		l.pending = nil
		if a.err != nil {
			return model.Reply{}, a.err
		}
		if a.won {
			return l.won(ob, a.told, 0), nil
		}
		// it returned false as the step came: its session expired while
		// it waited (a paused waiter learns so when it resumes), and the
		// model's client creates a new node: so does a new Acquire
		return l.acquire(ctx, c, ob)
	case <-t.C:
		ob.Told, ob.Stuck = fmt.Sprintf("Acquire still blocked after %v", zkUserBound), true
		return wonReply(l.d, false, 0, ob), nil
	case <-ctx.Done():
		return model.Reply{}, ctx.Err()
	}
}

// release is the user's Release: whether its node was still there to
// delete is what it reports.
func (l *zkUserConn) release(ctx context.Context, c *client, k model.ActionKind, ob *Obs) (model.Reply, error) {
	if err := c.lookBefore(ctx, ob); err != nil {
		return model.Reply{}, err
	}
	ok, told, err := l.user.release(ctx, l.i, ob.Before)
	if err != nil {
		return model.Reply{}, err
	}
	ob.Told = told
	return releasedReply(l.d, c, ob, ok), nil
}
