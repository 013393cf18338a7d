package reality

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// drainBound is how long a run's setup waits for the connections of an
// earlier run on its databases to close before it kills them.
const drainBound = 2 * time.Second

// drainEarlier makes sure nothing of an earlier run on the same database
// lands in this one. A slot of locktest plays schedule after schedule on
// one pair of databases, with the same lock key and the same lock values;
// a connection of the last run that is still open (its close not yet
// seen by the server, a request still on its way) can set or delete a
// key after this run's reset. Redis runs a connection's commands before
// it sees the connection's end, so once every other normal connection on
// db is gone, all they sent has been applied, and the reset that follows
// clears it. A connection still open after drainBound (a client that
// never closes its own) is killed: what it has not sent never lands.
//
// A connection that has sent no command yet (cmd=NULL) is on db 0 as far
// as the server knows, whatever it will SELECT: those are left alone (an
// earlier run's has nothing that landed, and is closed with its proxy;
// another slot's is live). On db 0 a connection that has sent commands
// may still be another slot's on its way to its SELECT (HELLO first):
// waited for up to drainBound like the others, but never killed.
// db is c's database; own are the connections of this run's admin
// clients (clientIDs), left alone.
func drainEarlier(ctx context.Context, c *redis.Client, own []int64) error {
	db := c.Options().DB
	deadline := time.Now().Add(drainBound)
	for {
		list, err := c.Do(ctx, "CLIENT", "LIST", "TYPE", "normal").Text()
		if err != nil {
			return fmt.Errorf("CLIENT LIST on %s: %v", c.Options().Addr, err)
		}
		left := earlierConns(list, db, own)
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			if db == 0 { // maybe another slot's, before its SELECT
				return nil
			}
			for _, k := range left {
				// gone already is fine: only its end is wanted
				_ = c.ClientKillByFilter(ctx, "ID", strconv.FormatInt(k, 10)).Err()
			}
			deadline = time.Now().Add(drainBound)
			continue
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %d connections of an earlier run on %s db %d to close: %v", len(left), c.Options().Addr, db, ctx.Err())
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// adminName names the connections of the run's conductor that are no
// client's (a server's, a replica set's, an observer's): drainEarlier
// leaves them alone.
const adminName = "lockcheck-admin"

// admin is o for a connection of the conductor's own (adminName).
func admin(o *redis.Options) *redis.Options {
	o.ClientName = adminName
	return o
}

// clientIDs are the connections of clients, each of one connection
// (clientOptions), by CLIENT ID.
func clientIDs(ctx context.Context, clients ...*redis.Client) ([]int64, error) {
	var ids []int64
	for _, c := range clients {
		id, err := c.ClientID(ctx).Result()
		if err != nil {
			return nil, fmt.Errorf("CLIENT ID on %s: %v", c.Options().Addr, err)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// earlierConns are the ids of CLIENT LIST's connections on db that have
// sent a command and are not among own, nor the conductor's (adminName).
func earlierConns(list string, db int, own []int64) []int64 {
	var ids []int64
	want := "db=" + strconv.Itoa(db)
	for line := range strings.SplitSeq(list, "\n") {
		var id int64 = -1
		on, counted := false, true
		for f := range strings.FieldsSeq(line) {
			if v, ok := strings.CutPrefix(f, "id="); ok {
				if n, err := strconv.ParseInt(v, 10, 64); err == nil {
					id = n
				}
			}
			if f == want {
				on = true
			}
			if f == "cmd=NULL" || f == "name="+adminName {
				counted = false
			}
		}
		if id >= 0 && on && counted && !slices.Contains(own, id) {
			ids = append(ids, id)
		}
	}
	return ids
}
