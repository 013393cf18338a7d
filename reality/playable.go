package reality

import (
	"errors"
	"slices"
	"strings"

	"lockcheck/model"
)

// NotPlayable is the answer "cannot be played for real, because …": the
// design has a feature, a fault or a step that real runs do not play (or,
// with Client set, that lock client cannot play it). It is not a failure
// of a run and not a disagreement: every caller tells it from one with
// errors.As (explore reproduce exits 3, "not judged"; the sweep of the
// counterexample files counts the file as not playable; the library table
// shows the row as not played).
type NotPlayable struct {
	Design  string // the design's name
	Client  string // the lock client that cannot play it; "" when no real run can
	Because string // why, and what to change to play it
}

func (e *NotPlayable) Error() string {
	who := "design " + e.Design
	if e.Client != "" {
		who += " with client " + e.Client
	}
	return who + " cannot be played for real, because " + e.Because
}

// IsNotPlayable reports whether err is (or wraps) a NotPlayable, and
// returns it.
func IsNotPlayable(err error) (*NotPlayable, bool) {
	var np *NotPlayable
	ok := errors.As(err, &np)
	return np, ok
}

// notPlayable wraps a refusal: its text loses a leading "design NAME: ".
func notPlayable(d *model.Design, client string, err error) *NotPlayable {
	if np, ok := IsNotPlayable(err); ok {
		return np
	}
	why := strings.TrimPrefix(err.Error(), "design "+d.Name()+": ")
	return &NotPlayable{Design: d.Name(), Client: client, Because: why}
}

// Playable reports whether the design can be played for real: nil, or a
// *NotPlayable saying why not (see playable for what is played).
func Playable(d *model.Design) error {
	if d.Counter == model.CounterExternal {
		// the real clients have no external counter node: a Redlock client
		// skipped the schedule's INCR and the runs differed (found by the
		// LOCKCHECK_REALITY_ALL sweep)
		return &NotPlayable{Design: d.Name(), Because: "an external fencing counter (counter=external: its own Redis node for INCR, and its counter-crash steps) is not played for real yet; set counter=service"}
	}
	if err := playable(d); err != nil {
		return notPlayable(d, "", err)
	}
	return nil
}

// clientRefusal is CheckClient's refusal as a NotPlayable when the client
// is one of ClientNames (a library that cannot play the design); an
// unknown client name stays bad input.
func clientRefusal(d *model.Design, client string, err error) error {
	if !slices.Contains(ClientNames, client) {
		return err
	}
	np := notPlayable(d, client, err)
	np.Because = strings.TrimPrefix(np.Because, "client "+client+": ")
	return np
}
