package reality

import (
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"lockcheck/model"
)

// The keys of a run. The lock and its fence counter live in the lock
// database, the counter and its check columns in the storage database (a
// different index, so the storage is a store of its own that the clients
// talk to with their own connections).
const (
	LockKey    = model.LockKey // "lock:order-42", as in the seed
	FenceKey   = "lock:fence"
	CounterKey = "order-42:counter"    // the counter the jobs increment
	MaxTokKey  = "order-42:last_token" // highest token seen (max-token, max-write, cond-update)
	VersionKey = "order-42:version"    // version column (cas)
	// NoticeChannel carries release notices (wait=notify): a release that
	// deletes the key publishes on it; an expiry publishes nothing.
	NoticeChannel = "lock:order-42:released"
)

// Lock-service scripts. Redis runs a script atomically.
var (
	// acquireScript is SET NX PX and INCR lock:fence in one step: the token
	// comes with the lock, or nothing happens (acquire=script).
	acquireScript = redis.NewScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2])
end
return false`)

	// setNXIncrScript is SET NX (no expiry yet) and INCR lock:fence in one
	// step; the EXPIRE is a second request (acquire=set-expire).
	setNXIncrScript = redis.NewScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX') then
  return redis.call('INCR', KEYS[2])
end
return false`)

	// cadScript is the seed's check-and-delete release.
	cadScript = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("DEL", KEYS[1])
else
  return 0
end`)

	// renewScript is the watchdog's extension: PEXPIRE only if the key is
	// still ours.
	renewScript = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("PEXPIRE", KEYS[1], ARGV[2])
else
  return 0
end`)

	// renewSetNXScript is extend=setnx's renewal, as redsync's
	// touchWithSetNXScript (WithSetNXOnExtend): PEXPIRE its own key, or
	// set a missing one again.
	renewSetNXScript = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("PEXPIRE", KEYS[1], ARGV[2])
elseif redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2], "NX") then
  return 1
else
  return 0
end`)

	// lookScript is the observer's look at the key: its value ("": no key)
	// and its PTTL in one reply. It only reads.
	lookScript = redis.NewScript(`
return {redis.call('GET', KEYS[1]) or '', redis.call('PTTL', KEYS[1])}`)
)

// Planted bugs (design parameter bug=…): the same deliberate mistakes as
// the model's, made for real, so that a buggy design is compared with its
// buggy model.
var (
	// bug=set-without-nx: SET without NX overwrites a held key.
	acquireNoNXScript = redis.NewScript(`
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return redis.call('INCR', KEYS[2])`)
	setNoNXIncrScript = redis.NewScript(`
redis.call('SET', KEYS[1], ARGV[1])
return redis.call('INCR', KEYS[2])`)
	// bug=cad-no-check: the "check-and-delete" deletes whatever is there.
	cadNoCheckScript = redis.NewScript(`return redis.call("DEL", KEYS[1])`)
)

// storageScripts are the checks the storage does, each one atomic on the
// storage server. KEYS are CounterKey, MaxTokKey, VersionKey.
//
// A read returns {1, counter, version} when served, {0, highest token}
// when refused. ARGV[1] is the token sent (0: none).
// A write returns {1} when accepted, {0, highest token} when refused. ARGV
// are the value (read+1, computed by the client), the token sent (0: none)
// and the version the client read. The counter is always SET to the
// client's value, never incremented by the server: a server-side increment
// would hide a lost update.
//
// With fence-check=two-step (max-token, max-write) the write is two
// requests, as the model's storeCheck and apply: write is then the token
// check alone, which compares the token with the highest seen, records it
// and answers {1} (passed: the client sends the write next) or {0, highest
// token}, writing nothing; apply is the write that follows, with the same
// ARGV, which SETs the counter unchecked and answers {1}.
//
// replicaRead is a read served by the storage's replica (stale-reads):
// read-only (flags=no-writes, as a replica runs it), it refuses a token
// below the highest the replica has (max-token, max-write) and records
// nothing, as the model's replicaRead.
//
// With the fencing state kept apart from the row (fenceApart:
// storage-loses=fence, max-token or max-write), a token check of its own
// runs first on the fence's server (fenceRead, fenceWrite: {1} passed,
// {0, highest token} refused, recording as the design's check records),
// and read, write and apply are then the row's alone, on the row's
// server: the counter and version read, and the counter SET.
type storageScripts struct {
	read, write *redis.Script
	apply       *redis.Script // fence-check=two-step: the unchecked write (nil: atomic)
	replicaRead *redis.Script
	// fenceRead, fenceWrite: the token checks on the fence's own server
	// (nil: the check and the row are one script)
	fenceRead, fenceWrite *redis.Script
}

const readTail = `
return {1, tonumber(redis.call('GET', KEYS[1]) or '0'), tonumber(redis.call('GET', KEYS[3]) or '0')}`

// applySource is fence-check=two-step's second request: the write whose
// token check passed earlier, applied whatever the storage has seen since.
const applySource = `
redis.call('SET', KEYS[1], ARGV[1])
return {1}`

// storageSource is the Lua of a storage mode's read and write (with
// fence-check=two-step: of its token check alone, without the SET), with
// the model's planted bugs where they apply.
func storageSource(mode model.StorageMode, bug model.Bug, twoStep bool) (read, write string) {
	refuse := "true"
	if bug == model.BugNoTokenCheck {
		refuse = "false" // records tokens, never refuses
	}
	record := "if t > m then redis.call('SET', KEYS[2], t) end"
	readRecord := record
	if bug == model.BugReadNoRecord {
		readRecord = ""
	}
	setCounter := "\nredis.call('SET', KEYS[1], ARGV[1])\nreturn {1}"
	if twoStep && (mode == model.StorageMaxToken || mode == model.StorageMaxWrite) {
		setCounter = "\nreturn {1}" // passed: the apply sets the counter
	}
	tokenCheck := func(cmp, rec string, arg int) string { return tokenCheckSource(cmp, refuse, rec, arg) }
	switch mode {
	case model.StorageMaxToken:
		// refuse a token below the highest seen; reads record theirs too
		return tokenCheck("t < m", readRecord, 1) + readTail, tokenCheck("t < m", record, 2) + setCounter
	case model.StorageMaxWrite:
		// refuse a token below the highest seen; only writes record
		return tokenCheck("t < m", "", 1) + readTail, tokenCheck("t < m", record, 2) + setCounter
	case model.StorageCondUpdate:
		// UPDATE … SET v, last_token = t WHERE last_token < t
		return readTail, tokenCheck("not (m < t)", record, 2) + setCounter
	case model.StorageCAS:
		// compare-and-set on the version column
		return readTail, `
local v = tonumber(redis.call('GET', KEYS[3]) or '0')
if v ~= tonumber(ARGV[3]) then return {0, tonumber(redis.call('GET', KEYS[2]) or '0')} end
redis.call('SET', KEYS[3], v + 1)` + setCounter
	}
	return readTail, setCounter // plain: accepts everything
}

// tokenCheckSource is the Lua of a token check: the token sent (ARGV[arg])
// compared with the highest seen (KEYS[2]), refused when cmp holds (and
// refuse is true), else recorded by rec.
func tokenCheckSource(cmp, refuse, rec string, arg int) string {
	return strings.NewReplacer("ARG", []string{"", "ARGV[1]", "ARGV[2]"}[arg], "CMP", cmp, "REFUSE", refuse, "RECORD", rec).Replace(`
local t = tonumber(ARG)
if t ~= 0 then
  local m = tonumber(redis.call('GET', KEYS[2]) or '0')
  if REFUSE and CMP then return {0, m} end
  RECORD
end`)
}

// fenceApart reports whether design d keeps its storage's fencing state
// apart from the counter's row (model: storage.go, fenceApart): a storage
// failover that loses only it (storage-loses=fence), with a token check of
// its own (max-token, max-write); cond-update's last_token and cas's
// version are in the row, and no failover is offered to them.
func fenceApart(d *model.Design) bool {
	return storageReplicated(d) && d.StorageLoses == model.LossFence &&
		(d.Storage == model.StorageMaxToken || d.Storage == model.StorageMaxWrite)
}

// fenceSource is the Lua of the token checks kept apart from the row
// (fenceApart), the read's and the write's, as storageSource's with the
// row left out: each answers {1} when passed.
func fenceSource(mode model.StorageMode, bug model.Bug) (read, write string) {
	refuse := "true"
	if bug == model.BugNoTokenCheck {
		refuse = "false"
	}
	record := "if t > m then redis.call('SET', KEYS[2], t) end"
	readRecord := record
	if bug == model.BugReadNoRecord || mode == model.StorageMaxWrite { // max-write: only writes record
		readRecord = ""
	}
	const passed = "\nreturn {1}"
	return tokenCheckSource("t < m", refuse, readRecord, 1) + passed, tokenCheckSource("t < m", refuse, record, 2) + passed
}

// replicaReadSource is the Lua of a read served by the storage's replica:
// max-token and max-write refuse a token below the highest the replica
// has (bug=no-token-check: none), and nothing is recorded.
func replicaReadSource(mode model.StorageMode, bug model.Bug) string {
	src := "#!lua flags=no-writes\n"
	if (mode == model.StorageMaxToken || mode == model.StorageMaxWrite) && bug != model.BugNoTokenCheck {
		src += `
local t = tonumber(ARGV[1])
if t ~= 0 then
  local m = tonumber(redis.call('GET', KEYS[2]) or '0')
  if t < m then return {0, m} end
end`
	}
	return src + readTail
}

var (
	storageMu    sync.Mutex
	storageCache = map[[4]int]storageScripts{}
)

// storageFor returns the design's storage scripts.
func storageFor(d *model.Design) storageScripts {
	storageMu.Lock()
	defer storageMu.Unlock()
	apart := fenceApart(d)
	k := [4]int{int(d.Storage), int(d.Bug), int(d.FenceCheck), 0}
	if apart {
		k[3] = 1
	}
	if s, ok := storageCache[k]; ok {
		return s
	}
	twoStep := d.FenceCheck == model.FenceCheckTwoStep
	r, w := storageSource(d.Storage, d.Bug, twoStep)
	s := storageScripts{read: redis.NewScript(r), write: redis.NewScript(w), replicaRead: redis.NewScript(replicaReadSource(d.Storage, d.Bug))}
	if twoStep {
		s.apply = redis.NewScript(applySource)
	}
	if apart { // the checks on the fence's server, then the row's read or SET
		fr, fw := fenceSource(d.Storage, d.Bug)
		s.fenceRead, s.fenceWrite = redis.NewScript(fr), redis.NewScript(fw)
		s.read = redis.NewScript(readTail)
		if !twoStep {
			s.write = redis.NewScript(applySource)
		}
	}
	storageCache[k] = s
	return s
}

var storageKeys = []string{CounterKey, MaxTokKey, VersionKey}
