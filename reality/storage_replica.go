package reality

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"lockcheck/model"
)

// A design with storage faults (storage-failovers, stale-reads; model:
// storage.go) keeps its counter on a storage of the run's own: a primary
// redis-server and one replica following it with Redis replication, its
// link held by a proxy (a replicaSet, replica.go: the lock's replica
// design uses the same machinery). The replica lags until the schedule's
// storage-sync step lets its stream through, until the primary has its
// acknowledgement of everything; a storage-failover step drops what the
// link held, kills the primary and promotes the replica (REPLICAOF NO
// ONE), and every client's storage connection is moved to it: what the
// replica had not received, the accepted writes and the highest token
// alike (they are keys of one database, checked by one script), is lost.
//
// With storage-loses=fence (model: storage.go, fenceApart: max-token,
// max-write) the primary and replica hold only the fencing state, the
// highest token its own check records (scripts.go, fenceSource: a fencing
// proxy's store, a side table), replicated asynchronously; the counter's
// row is on the run's own storage database, which the failover does not
// touch, as the model's synchronously replicated row survives it. A
// failover then loses the highest tokens the replica had not received,
// and nothing else.
type storageCopy struct {
	rs  *replicaSet
	key string // the clients' proxy key for the storage's primary: its first address
	// replicaKey is the clients' proxy key for the storage's replica (its
	// first address), which serves stale reads
	replicaKey string
	// db are connections to the storage database of each server of the
	// set, for the steps' looks at what a server has
	db []*redis.Client
	// lossless: planted bug: a failover lets the replica catch up first,
	// so it loses nothing (plant.losslessFailover)
	lossless bool
	// row is the counter's row when the set holds only the fencing state
	// (storage-loses=fence; nil: the row is in the set)
	row *redis.Client
}

// fenceApart makes the set the fence's alone (storage-loses=fence): its
// primary starts with the highest token 0 and no row; row is where the
// counter's row is, which the steps' looks read.
func (c *storageCopy) fenceApart(ctx context.Context, row *redis.Client) error {
	p := c.db[c.rs.primary]
	if err := p.Del(ctx, storageKeys...).Err(); err != nil {
		return fmt.Errorf("reset the fence's keys on %s: %v", c.rs.primaryAddr(), err)
	}
	if err := p.Set(ctx, MaxTokKey, 0, 0).Err(); err != nil {
		return fmt.Errorf("SET %s on %s: %v", MaxTokKey, c.rs.primaryAddr(), err)
	}
	c.row = row
	return nil
}

// storageReplicated reports whether design d plays its storage on a
// primary and a replica of its own (storage faults).
func storageReplicated(d *model.Design) bool { return d.StorageFailovers > 0 || d.StaleReads > 0 }

// startStorageCopy starts the storage's primary and replica (and, when a
// stale read can follow a failover, a spare to play the old primary back
// as the new replica).
func startStorageCopy(ctx context.Context, d *model.Design, db int, pl plant) (*storageCopy, error) {
	spares := 0
	if storageRejoins(d) {
		spares = 1
	}
	rs, err := startReplicaSet(ctx, 1, spares, plant{})
	if err != nil {
		return nil, fmt.Errorf("storage replica: %v", err)
	}
	c := &storageCopy{rs: rs, key: rs.primaryAddr(), replicaKey: rs.servers[rs.order[0]].Addr(), lossless: pl.losslessFailover}
	for _, s := range rs.servers {
		c.db = append(c.db, redis.NewClient(admin(crashableOptions(s.Addr(), db))))
	}
	return c, nil
}

// storageRejoins reports whether the storage's replica follows the new
// primary after a failover: while a stale read can still come (model:
// storageReplicaDone keeps the replica while a storage fault is left).
func storageRejoins(d *model.Design) bool { return d.StaleReads > 0 }

// replicaServer is the storage replica's server.
func (c *storageCopy) replicaServer() int { return c.rs.order[0] }

// has is what server s of the set has in the storage database: the
// counter and the highest token (storage-loses=fence: no counter, 0).
func (c *storageCopy) has(ctx context.Context, s int) (counter, maxTok int, err error) {
	vals, err := c.db[s].MGet(ctx, CounterKey, MaxTokKey).Result()
	if err != nil {
		return 0, 0, fmt.Errorf("MGET %s %s on %s: %v", CounterKey, MaxTokKey, c.rs.servers[s].Addr(), err)
	}
	var n [2]int
	for k, v := range vals {
		if v == nil && k == 0 && c.row != nil { // the fence's server keeps no row
			continue
		}
		str, ok := v.(string)
		if !ok {
			return 0, 0, fmt.Errorf("MGET on %s: %v", c.rs.servers[s].Addr(), vals)
		}
		if n[k], err = strconv.Atoi(str); err != nil {
			return 0, 0, fmt.Errorf("MGET on %s: %q is not a number", c.rs.servers[s].Addr(), str)
		}
	}
	return n[0], n[1], nil
}

// sync is the model's storage-sync step: the replica catches up with the
// primary. The step shows what the replica has then.
func (c *storageCopy) sync(ctx context.Context, ob *Obs) error {
	if err := c.rs.catchUp(ctx, c.rs.order); err != nil {
		return err
	}
	var err error
	ob.Value, ob.Token, err = c.has(ctx, c.replicaServer())
	ob.Result = model.ResOK
	return err
}

// failover is the model's storage-failover step: the storage's primary
// dies and its replica is promoted with what it had; the clients' storage
// connections are moved to it. The step shows what the promoted replica
// has.
func (c *storageCopy) failover(ctx context.Context, ob *Obs, retarget func(from, to string)) error {
	if c.lossless {
		if err := c.rs.catchUp(ctx, c.rs.order); err != nil {
			return err
		}
	}
	rejoin := len(c.rs.spares) > 0 // a spare: the old primary comes back as the replica
	if err := c.rs.failover(ctx, 0, rejoin); err != nil {
		return err
	}
	retarget(c.key, c.rs.primaryAddr())
	if rejoin { // stale reads go to the new replica
		retarget(c.replicaKey, c.rs.servers[c.replicaServer()].Addr())
	}
	var err error
	ob.Value, ob.Token, err = c.has(ctx, c.rs.primary)
	ob.Result = model.ResOK
	if err == nil && c.row != nil { // the row survives: its counter
		ob.Value, err = c.row.Get(ctx, CounterKey).Int()
		if err != nil {
			err = fmt.Errorf("GET %s on the storage's row: %v", CounterKey, err)
		}
	}
	return err
}

func (c *storageCopy) stop() {
	for _, db := range c.db {
		db.Close()
	}
	c.rs.stop()
}

// storageStep plays the storage's own steps (storage-sync,
// storage-failover); errNotPlayed for any other.
func (w *redisStorage) storageStep(ctx context.Context, a model.Action, ob *Obs, retarget func(from, to string)) error {
	if w.copy == nil || a.Kind != model.ActStorageSync && a.Kind != model.ActStorageFailover {
		return errNotPlayed
	}
	if a.Kind == model.ActStorageSync {
		return w.copy.sync(ctx, ob)
	}
	if err := w.copy.failover(ctx, ob, retarget); err != nil {
		return err
	}
	if w.copy.row != nil { // the row is not the set's: the final counter stays where it is
		return nil
	}
	w.store.Close() // the reset's and the final counter's connection: to the new primary
	w.store = redis.NewClient(clientOptions(w.copy.rs.primaryAddr(), w.opts.StoreDB))
	return nil
}

// errNotPlayed: the world has no such step.
var errNotPlayed = errors.New("not played for real")
