package model

import (
	"fmt"
	"strconv"
	"strings"
)

// LockKind is the lock service a design uses. New services (replica with
// failover, Redlock, etcd, ZooKeeper, a database row lock) are new values
// here; the state already has room for several lock nodes (State.Nodes).
type LockKind uint8

const (
	// LockRedis is one Redis node: SET NX PX, keys expire by TTL.
	LockRedis LockKind = iota
	numLockKinds
)

// AcquireMode is how a client takes the lock and gets its fencing token.
type AcquireMode uint8

const (
	// AcquireScript: SET NX PX and INCR lock:fence in one Lua script.
	AcquireScript AcquireMode = iota
	// AcquireIncrBefore: INCR lock:fence once, then poll SET NX PX.
	AcquireIncrBefore
	// AcquireIncrAfter: poll SET NX PX, then INCR lock:fence as a second request.
	AcquireIncrAfter
	// AcquireSetExpire: SET NX (with INCR in the same MULTI) and then EXPIRE as a
	// second request; a crash between the two leaves a key that never expires.
	AcquireSetExpire
	numAcquireModes
)

// ReleaseMode is how a client gives the lock back.
type ReleaseMode uint8

const (
	// ReleaseDel is a plain DEL: it removes the key whoever holds it.
	ReleaseDel ReleaseMode = iota
	// ReleaseGetDel is GET, then DEL if the value was ours: two requests.
	ReleaseGetDel
	// ReleaseCAD is the atomic check-and-delete Lua script.
	ReleaseCAD
	numReleaseModes
)

// FenceMode says which storage requests carry the client's fencing token.
type FenceMode uint8

const (
	// FenceNone: no token is sent (and none is taken).
	FenceNone FenceMode = iota
	// FenceWrite: the token goes with writes.
	FenceWrite
	// FenceRW: the token goes with reads and writes.
	FenceRW
	numFenceModes
)

// StorageMode is what the storage holding the counter checks.
type StorageMode uint8

const (
	// StoragePlain accepts every request.
	StoragePlain StorageMode = iota
	// StorageMaxToken refuses a token below the highest seen and records every
	// token it sees, reads included.
	StorageMaxToken
	// StorageMaxWrite refuses a token below the highest seen but records only
	// the tokens of accepted writes.
	StorageMaxWrite
	// StorageCondUpdate is UPDATE … SET v, last_token = t WHERE last_token < t:
	// writes need a strictly greater token; reads are plain SELECTs.
	StorageCondUpdate
	// StorageCAS is a compare-and-set on a version column: a write is accepted
	// only if the version is still the one the client read. No token needed.
	StorageCAS
	numStorageModes
)

// ClockMode says when time may move.
type ClockMode uint8

const (
	// ClockUrgent: a tick happens only when no client can take a step now;
	// clients act as soon as they can, and only faults delay them.
	ClockUrgent ClockMode = iota
	// ClockFree: a tick may happen at any time, so any client may be late by
	// any amount without a fault (the semantics of the SPIN baseline).
	ClockFree
	numClockModes
)

// Bug is a planted bug: a deliberate mistake in the model's rules, used to
// test the testers (a suite that passes with a bug planted is not testing).
type Bug uint8

const (
	BugNone         Bug = iota
	BugSetWithoutNX     // SET without NX: acquire overwrites a held key
	BugCADNoCheck       // check-and-delete deletes without comparing the value
	BugNoTokenCheck     // token-checking storage records tokens but never refuses
	BugReadNoRecord     // max-token storage forgets the tokens of reads
	numBugs
)

// Limits on a design's numbers. Ticks are stored in a byte, so the horizon
// plus the longest wait must stay below 256.
const (
	MaxClients      = 8
	MaxNodes        = 5
	MaxHorizonTicks = 120
	MaxWaitTicks    = 60
)

// Design is one choice on each axis, plus the numbers and the fault budget.
type Design struct {
	Lock    LockKind
	Acquire AcquireMode
	Release ReleaseMode
	Fence   FenceMode
	Storage StorageMode
	Clock   ClockMode
	Bug     Bug // a planted bug (testing the testers); BugNone in real designs

	TTLTicks      int // a key set at t exists at t .. t+TTL-1
	WorkTicks     int // ticks between a client's read and its write
	Clients       int // jobs, one per client (A, B, C, …)
	HorizonTicks  int // the last tick; time never passes it
	FirstToken    int // the first fencing token INCR hands out
	Pauses        int // fault budget: pauses in one run
	MaxPauseTicks int // the longest pause
	SlowJobs      int // fault budget: jobs whose work takes SlowWorkTicks
	SlowWorkTicks int // work ticks of a slow job
	Crashes       int // fault budget: clients that crash for good
}

// axis describes one path segment or parameter that takes a word.
type axis struct {
	name   string
	values []string
	docs   []string
}

var (
	lockAxis = axis{"lock", []string{"redis"}, []string{
		"one Redis node: SET NX PX, the key expires after the TTL",
	}}
	acquireAxis = axis{"acquire", []string{"script", "incr-before", "incr-after", "set-expire"}, []string{
		"SET NX PX and INCR lock:fence in one Lua script",
		"INCR lock:fence once, then poll SET NX PX",
		"poll SET NX PX, then INCR lock:fence as a second request",
		"SET NX (+INCR), then EXPIRE as a second request",
	}}
	releaseAxis = axis{"release", []string{"del", "get-del", "cad"}, []string{
		"plain DEL: removes the key whoever holds it",
		"GET, then DEL if it was ours: two requests",
		"check-and-delete Lua script, atomic",
	}}
	fenceAxis = axis{"fence", []string{"none", "write", "rw"}, []string{
		"no fencing token",
		"the token goes with writes",
		"the token goes with reads and writes",
	}}
	storageAxis = axis{"storage", []string{"plain", "max-token", "max-write", "cond-update", "cas"}, []string{
		"accepts everything",
		"refuses a token below the highest seen; records reads' tokens too",
		"refuses a token below the highest seen; records only writes' tokens",
		"UPDATE … WHERE last_token < t (strictly greater token to write)",
		"compare-and-set on a version column (no token needed)",
	}}
	bugAxis = axis{"bug", []string{"none", "set-without-nx", "cad-no-check", "no-token-check", "read-no-record"}, []string{
		"no planted bug (default)",
		"SET without NX: acquire overwrites a held key",
		"check-and-delete deletes without comparing the value",
		"token-checking storage records tokens but never refuses",
		"max-token storage forgets the tokens of reads",
	}}
	clockAxis = axis{"clock", []string{"urgent", "free"}, []string{
		"a tick only when no client can act (default)",
		"a tick at any time: clients may be late without a fault (SPIN baseline)",
	}}
)

// intParam is a numeric parameter of a design name.
type intParam struct {
	name     string
	min, max int
	def      int
	field    func(*Design) *int
	doc      string
}

var intParams = []intParam{
	{"ttl", 1, MaxWaitTicks, 10, func(d *Design) *int { return &d.TTLTicks }, "key TTL in ticks (PX)"},
	{"work", 0, MaxWaitTicks, 2, func(d *Design) *int { return &d.WorkTicks }, "ticks between read and write"},
	{"clients", 1, MaxClients, 3, func(d *Design) *int { return &d.Clients }, "clients, one job each"},
	{"horizon", 1, MaxHorizonTicks, 40, func(d *Design) *int { return &d.HorizonTicks }, "last tick"},
	{"token", 1, 1000, 1, func(d *Design) *int { return &d.FirstToken }, "first fencing token"},
	{"pauses", 0, 3, 1, func(d *Design) *int { return &d.Pauses }, "fault budget: pauses per run"},
	{"max-pause", 1, MaxWaitTicks, 15, func(d *Design) *int { return &d.MaxPauseTicks }, "longest pause in ticks"},
	{"slow", 0, MaxClients, 0, func(d *Design) *int { return &d.SlowJobs }, "fault budget: slow jobs per run"},
	{"slow-work", 1, MaxWaitTicks, 12, func(d *Design) *int { return &d.SlowWorkTicks }, "work ticks of a slow job"},
	{"crashes", 0, MaxClients, 0, func(d *Design) *int { return &d.Crashes }, "fault budget: client crashes per run"},
}

// DefaultDesign is redis/cad/none/plain with every parameter at its default.
func DefaultDesign() Design {
	d := Design{Lock: LockRedis, Acquire: AcquireScript, Release: ReleaseCAD, Fence: FenceNone, Storage: StoragePlain}
	for _, p := range intParams {
		*p.field(&d) = p.def
	}
	return d
}

func (k LockKind) String() string    { return word(lockAxis, int(k)) }
func (m AcquireMode) String() string { return word(acquireAxis, int(m)) }
func (m ReleaseMode) String() string { return word(releaseAxis, int(m)) }
func (m FenceMode) String() string   { return word(fenceAxis, int(m)) }
func (m StorageMode) String() string { return word(storageAxis, int(m)) }
func (m ClockMode) String() string   { return word(clockAxis, int(m)) }
func (b Bug) String() string         { return word(bugAxis, int(b)) }

func word(a axis, i int) string {
	if i < 0 || i >= len(a.values) {
		return fmt.Sprintf("%s(%d)", a.name, i)
	}
	return a.values[i]
}

// Name is the design's canonical name: lock/release/fence/storage, then the
// parameters that differ from their defaults, in a fixed order. ParseDesign
// of Name gives the same design back.
func (d Design) Name() string {
	var b strings.Builder
	b.WriteString(d.Lock.String())
	b.WriteByte('/')
	b.WriteString(d.Release.String())
	b.WriteByte('/')
	b.WriteString(d.Fence.String())
	b.WriteByte('/')
	b.WriteString(d.Storage.String())
	if d.Acquire != AcquireScript {
		b.WriteString(",acquire=" + d.Acquire.String())
	}
	if d.Clock != ClockUrgent {
		b.WriteString(",clock=" + d.Clock.String())
	}
	if d.Bug != BugNone {
		b.WriteString(",bug=" + d.Bug.String())
	}
	for _, p := range intParams {
		if v := *p.field(&d); v != p.def {
			fmt.Fprintf(&b, ",%s=%d", p.name, v)
		}
	}
	return b.String()
}

func (d Design) String() string { return d.Name() }

// DesignError is a bad design name: what was wrong and what is allowed.
type DesignError struct{ Msg string }

func (e *DesignError) Error() string { return e.Msg }

func designErr(format string, args ...any) error {
	return &DesignError{Msg: fmt.Sprintf(format, args...)}
}

// ParseDesign reads a design name: a preset (demo1 … demo6) or
// lock/release/fence/storage followed by ,key=value parameters. Parameters
// may also follow a preset (demo2,clients=2).
func ParseDesign(name string) (Design, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return Design{}, designErr("empty design name (want lock/release/fence/storage[,key=value…] or a preset: %s)", strings.Join(PresetNames(), ", "))
	}
	parts := strings.Split(name, ",")
	var d Design
	if p, ok := presetDesign(parts[0]); ok {
		d = p
	} else {
		segs := strings.Split(parts[0], "/")
		if len(segs) != 4 {
			return Design{}, designErr("design %q: want 4 parts lock/release/fence/storage, got %d (or a preset: %s)", clip(parts[0]), len(segs), strings.Join(PresetNames(), ", "))
		}
		d = DefaultDesign()
		for i, a := range []axis{lockAxis, releaseAxis, fenceAxis, storageAxis} {
			v, err := a.parse(segs[i])
			if err != nil {
				return Design{}, err
			}
			switch i {
			case 0:
				d.Lock = LockKind(v)
			case 1:
				d.Release = ReleaseMode(v)
			case 2:
				d.Fence = FenceMode(v)
			case 3:
				d.Storage = StorageMode(v)
			}
		}
	}
	seen := map[string]bool{}
	for _, kv := range parts[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return Design{}, designErr("design parameter %q: want key=value (keys: %s)", clip(kv), paramNames())
		}
		if seen[k] {
			return Design{}, designErr("design parameter %q given twice", clip(k))
		}
		seen[k] = true
		if err := d.set(k, v); err != nil {
			return Design{}, err
		}
	}
	if err := d.Validate(); err != nil {
		return Design{}, err
	}
	return d, nil
}

func (a axis) parse(s string) (int, error) {
	for i, v := range a.values {
		if v == s {
			return i, nil
		}
	}
	return 0, designErr("unknown %s %q (allowed: %s)", a.name, clip(s), strings.Join(a.values, ", "))
}

func (d *Design) set(k, v string) error {
	switch k {
	case "acquire":
		i, err := acquireAxis.parse(v)
		d.Acquire = AcquireMode(i)
		return err
	case "clock":
		i, err := clockAxis.parse(v)
		d.Clock = ClockMode(i)
		return err
	case "bug":
		i, err := bugAxis.parse(v)
		d.Bug = Bug(i)
		return err
	}
	for _, p := range intParams {
		if p.name != k {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < p.min || n > p.max {
			return designErr("design parameter %s=%q: want a whole number from %d to %d", k, clip(v), p.min, p.max)
		}
		*p.field(d) = n
		return nil
	}
	return designErr("unknown design parameter %q (keys: %s)", clip(k), paramNames())
}

// Validate checks every number against its range.
func (d Design) Validate() error {
	if int(d.Lock) >= int(numLockKinds) || int(d.Acquire) >= int(numAcquireModes) || int(d.Release) >= int(numReleaseModes) ||
		int(d.Fence) >= int(numFenceModes) || int(d.Storage) >= int(numStorageModes) || int(d.Clock) >= int(numClockModes) || int(d.Bug) >= int(numBugs) {
		return designErr("design has an axis value out of range")
	}
	for _, p := range intParams {
		if v := *p.field(&d); v < p.min || v > p.max {
			return designErr("design parameter %s=%d: want a whole number from %d to %d", p.name, v, p.min, p.max)
		}
	}
	return nil
}

func paramNames() string {
	names := []string{"acquire", "clock", "bug"}
	for _, p := range intParams {
		names = append(names, p.name)
	}
	return strings.Join(names, ", ")
}

// clip keeps error messages one short line whatever the input.
func clip(s string) string {
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}

// DescribeAxes lists every axis and parameter with its values, for
// `explore designs`.
func DescribeAxes() string {
	var b strings.Builder
	b.WriteString("A design name is lock/release/fence/storage[,key=value…], e.g. redis/cad/rw/max-token,ttl=10,work=2\n\n")
	for _, a := range []axis{lockAxis, releaseAxis, fenceAxis, storageAxis, acquireAxis, clockAxis, bugAxis} {
		kind := "path part"
		if a.name == "acquire" || a.name == "clock" || a.name == "bug" {
			kind = "parameter " + a.name + "=…, default " + a.values[0]
		}
		fmt.Fprintf(&b, "%s (%s):\n", a.name, kind)
		for i, v := range a.values {
			fmt.Fprintf(&b, "  %-12s %s\n", v, a.docs[i])
		}
	}
	b.WriteString("numbers (parameters key=value):\n")
	for _, p := range intParams {
		fmt.Fprintf(&b, "  %-12s %s (%d to %d, default %d)\n", p.name, p.doc, p.min, p.max, p.def)
	}
	b.WriteString("presets (the seed's demos):\n")
	for _, p := range presets {
		fmt.Fprintf(&b, "  %-12s %s = %s\n", p.name, p.title, p.spec)
	}
	return b.String()
}
