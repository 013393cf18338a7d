package reality

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"lockcheck/model"
)

// WAIT after the acquire (lock=replica, ack=wait; model: lock_replica.go,
// ack). Once the acquire's last write is applied, the client sends
// WAIT acks 0 on the connection that wrote (WAIT counts the replicas that
// have acknowledged the primary's stream up to that connection's last
// request; Redis 7.0 moves that mark on every request, so nothing else
// goes on it in between) and is left waiting in it, as the model's client
// is in PhaseAck. The WAIT's connection goes
// through a proxy of its own (waitProxyKey), which holds the WAIT's reply
// until the client's wait step: the model's client learns what WAIT
// answered at that step, and a failover before it breaks the WAIT even
// when the server had answered (model: ackBroken).
//
// The WAIT returns by itself when a replicate step brings acks replicas
// its write (the replicas' acknowledgements come through their links,
// which only a replicate step opens). Its timeout, T ticks from the
// acquire (ack-timeout), is counted by the client in the model's ticks,
// and fires at the wait step the model's timeout allows, from the
// client's other connection: CLIENT UNBLOCK id TIMEOUT, which makes WAIT
// reply as its own timeout does, with the count then. A server-side timer
// of T ticks would fire somewhere in tick since+T, racing that tick's
// steps (a replicate step before the wait step counts in the model and
// would not, or would by chance, on the server); and a poll (WAIT acks 1,
// each tick) would not be one WAIT the primary's death can break.
type waitReply struct {
	n   int64
	err error
}

// waitProxyKey names the proxy of a client's SET and WAIT connection.
func waitProxyKey(upstream string) string { return "wait@" + upstream }

// sendWait sends WAIT acks 0 on the acquire's connection and returns once
// the primary has it blocked (bounded: a tick).
func (l *keyLock) sendWait(ctx context.Context, c *client) error {
	if l.wait != nil {
		return fmt.Errorf("client %s: a WAIT is sent while its last one is still waiting", model.ClientName(c.i))
	}
	id, err := l.acq.ClientID(ctx).Result()
	if err != nil {
		return fmt.Errorf("client %s: CLIENT ID: %v", model.ClientName(c.i), err)
	}
	key := l.waitKey
	if err := c.net.holdReplies(key); err != nil {
		return err
	}
	l.waitID, l.wait = id, make(chan waitReply, 1)
	go func(ch chan<- waitReply) {
		n, err := l.acq.Do(ctx, "WAIT", l.d.Acks, 0).Int64()
		ch <- waitReply{n, err}
	}(l.wait)
	deadline := time.Now().Add(c.clk.tick)
	for {
		blocked, err := l.waiting(ctx)
		if err != nil {
			return fmt.Errorf("client %s: %v", model.ClientName(c.i), err)
		}
		if blocked || c.net.keepsReply(key) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("client %s: its WAIT did not reach the primary within a tick", model.ClientName(c.i))
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// waiting reports whether the primary has the client's WAIT blocked
// (CLIENT LIST ID on the client's other connection).
func (l *keyLock) waiting(ctx context.Context) (bool, error) {
	info, err := l.lock.Do(ctx, "CLIENT", "LIST", "ID", l.waitID).Text()
	if err != nil {
		return false, fmt.Errorf("CLIENT LIST ID %d: %v", l.waitID, err)
	}
	blocked := false
	for _, f := range strings.Fields(info) {
		if flags, ok := strings.CutPrefix(f, "flags="); ok && strings.Contains(flags, "b") {
			blocked = true
		}
	}
	return blocked && strings.Contains(info, " cmd=wait "), nil
}

// ack is the client's wait step: WAIT's reply, let through now. A WAIT
// still blocked returns now if the model's timeout is due (CLIENT
// UNBLOCK … TIMEOUT); if not, it has not returned, and the client takes no
// step.
func (l *keyLock) ack(ctx context.Context, c *client, now uint8, ob *Obs) (model.Reply, error) {
	d := l.d
	if l.wait == nil {
		return model.Reply{}, fmt.Errorf("client %s: a wait step with no WAIT sent", model.ClientName(c.i))
	}
	key := l.waitKey
	if !c.net.keepsReply(key) {
		blocked, err := l.waiting(ctx)
		if err != nil {
			return model.Reply{}, fmt.Errorf("client %s: %v", model.ClientName(c.i), err)
		}
		due := d.AckTimeoutTicks > 0 && int(now) >= int(c.m.Since)+d.AckTimeoutTicks
		switch {
		case blocked && !due:
			ob.Skipped = true
			ob.Why = fmt.Sprintf("its WAIT %d has not returned: fewer replicas have acknowledged its acquire", d.Acks)
			return model.Reply{}, nil
		case blocked:
			c.net.resumeReplies()
			if err := l.lock.Do(ctx, "CLIENT", "UNBLOCK", l.waitID, "TIMEOUT").Err(); err != nil {
				return model.Reply{}, fmt.Errorf("client %s: CLIENT UNBLOCK %d TIMEOUT: %v", model.ClientName(c.i), l.waitID, err)
			}
		}
	}
	c.net.resumeReplies()
	w, err := l.waitReturn(ctx, c)
	if err != nil {
		return model.Reply{}, err
	}
	if w.err != nil {
		return model.Reply{}, fmt.Errorf("client %s: WAIT %d 0: %v", model.ClientName(c.i), d.Acks, w.err)
	}
	ob.Value, ob.Result = int(w.n), model.ResNoop
	if w.n >= int64(d.Acks) {
		ob.Result = model.ResOK
	}
	return model.Reply{Result: ob.Result}, nil
}

// waitReturn is the WAIT's return (bounded: a tick).
func (l *keyLock) waitReturn(ctx context.Context, c *client) (waitReply, error) {
	t := time.NewTimer(c.clk.tick)
	defer t.Stop()
	select {
	case w := <-l.wait:
		l.wait = nil
		return w, nil
	case <-t.C:
		return waitReply{}, fmt.Errorf("client %s: its WAIT did not return within a tick of its wait step", model.ClientName(c.i))
	case <-ctx.Done():
		return waitReply{}, ctx.Err()
	}
}

// primaryDied is a failover for the client: a WAIT it is left in fails
// with the primary's connection, and its acquire with it; it tries again
// at the next tick (model: ackBroken).
func (l *keyLock) primaryDied(ctx context.Context, c *client, now uint8) error {
	if l.wait == nil {
		return nil
	}
	c.net.resumeReplies()
	w, err := l.waitReturn(ctx, c)
	if err != nil {
		return err
	}
	if w.err == nil || !networkError(w.err) {
		return fmt.Errorf("client %s: its WAIT returned %d (%v) when the primary died", model.ClientName(c.i), w.n, w.err)
	}
	c.m.Phase, c.m.Ready = model.PhaseAcquire, now+1
	return nil
}

// waiter is a lock whose acquire is followed by WAIT (keyLock, ack=wait).
type waiter interface {
	sendWait(ctx context.Context, c *client) error
	ack(ctx context.Context, c *client, now uint8, ob *Obs) (model.Reply, error)
	primaryDied(ctx context.Context, c *client, now uint8) error
}

var _ waiter = (*keyLock)(nil)

// acqCmds are the requests of an acquire, and WAIT.
type acqCmds interface {
	redis.Cmdable
	Do(ctx context.Context, args ...interface{}) *redis.Cmd
}

// acqClient is the client of an acquire's requests: the lock's own, or
// with ack=wait one of a single connection through the WAIT's proxy.
func acqClient(d *model.Design, lock *redis.Client, h *netHold, lockAddr string, db int) (acqCmds, error) {
	if d.Ack != model.AckWait {
		return lock, nil
	}
	via, err := h.viaKey(waitProxyKey(lockAddr), lockAddr)
	if err != nil {
		return nil, err
	}
	// one connection, so that WAIT counts the acks of the SET's; dialled
	// only when used (a refill in the background could dial while a
	// failover has no primary up, and go-redis then stops dialling for a
	// second)
	o := clientOptions(via, db)
	o.MinIdleConns = 0
	return redis.NewClient(o), nil
}
