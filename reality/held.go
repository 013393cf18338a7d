package reality

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"
)

// heldKey is the context key of a call whose reply the run holds.
type heldKey struct{}

// HeldFor is how long the run holds the reply of the call made with ctx:
// an acquire whose reply the client's proxy holds (delay-at=acquire), or
// a library's or a user's release whose request it holds (and so its
// reply: delay-at=release), its hold's ticks at the run's tick; 0 for a
// call whose reply is not held.
// A caller that bounds its lock's calls in time (locktest's CallTimeout)
// counts it out: the call waits that long for the run, not for itself.
func HeldFor(ctx context.Context) time.Duration {
	d, _ := ctx.Value(heldKey{}).(time.Duration)
	return d
}

// HeldError is a held call failing: client Client's call Call, whose reply
// the run held for Ticks ticks of Tick, returned Err after Took, before or
// as the reply was let through. Timeout tells a client that gave up
// waiting (its read timeout) from one whose call failed otherwise.
type HeldError struct {
	Call   string
	Client int
	Ticks  int
	Tick   time.Duration
	Took   time.Duration
	Err    error
}

// Held is the hold in real time: Ticks × Tick.
func (e *HeldError) Held() time.Duration { return time.Duration(e.Ticks) * e.Tick }

func (e *HeldError) Error() string {
	return fmt.Sprintf("%v (after %.1f s, while the run held its reply for %d ticks: %.1f s at the %v tick)", e.Err, e.Took.Seconds(), e.Ticks, e.Held().Seconds(), e.Tick)
}

func (e *HeldError) Unwrap() error { return e.Err }

// Timeout reports whether the call gave up waiting: a net.Error that is a
// timeout (go-redis's read timeout: "i/o timeout"), or a context deadline.
func (e *HeldError) Timeout() bool {
	var ne net.Error
	return errors.As(e.Err, &ne) && ne.Timeout() || errors.Is(e.Err, context.DeadlineExceeded)
}
