package model

import (
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

func TestStateHasNoPadding(t *testing.T) {
	fields := MaxClients*int(unsafe.Sizeof(Client{})) + MaxNodes*int(unsafe.Sizeof(Node{})) + int(unsafe.Sizeof(Storage{})) + int(unsafe.Sizeof(StorageReplica{})) + 2 + 12
	require.Equal(t, fields, stateSize)
	require.Equal(t, 18, int(unsafe.Sizeof(Client{})))
	require.Equal(t, 6, int(unsafe.Sizeof(Node{})))
	require.Equal(t, 6, int(unsafe.Sizeof(Storage{})))
}

func TestDesignNamesRoundTrip(t *testing.T) {
	for _, name := range []string{
		"redis/cad/rw/max-token",
		"redis/del/none/plain,work=12",
		"redis/get-del/write/cond-update,acquire=incr-after,ttl=5,clients=2,crashes=1",
		"redis/cad/none/cas,acquire=set-expire,clock=free,horizon=41",
		"redis/cad/rw/max-token,bug=read-no-record",
	} {
		d, err := ParseDesign(name)
		require.NoError(t, err, name)
		require.Equal(t, name, d.Name())
	}
	// parameters in another order, or at their defaults, give the canonical name
	d, err := ParseDesign("redis/cad/rw/max-token,work=2,ttl=10,acquire=script")
	require.NoError(t, err)
	require.Equal(t, "redis/cad/rw/max-token", d.Name())
	// presets
	d, err = ParseDesign("demo3")
	require.NoError(t, err)
	require.Equal(t, "redis/cad/write/max-token,token=33", d.Name())
	d, err = ParseDesign("demo2,clients=2")
	require.NoError(t, err)
	require.Equal(t, "redis/cad/none/plain,clients=2", d.Name())
}

func TestBadDesignNames(t *testing.T) {
	cases := map[string]string{
		"":                                           "empty design name",
		"redis/cad":                                  "want 4 parts",
		"etcdx/cad/rw/plain":                         "unknown lock \"etcdx\" (did you mean etcd?) (allowed: redis",
		"redis/cad/none/plain,tll=5":                 "unknown design parameter \"tll\" (did you mean ttl? explore designs lists every key)",
		"redis/cad/none/plain,acquire=set-expir":     "unknown acquire \"set-expir\" (did you mean set-expire?)",
		"demo22":                                     "design \"demo22\" (did you mean demo2?)",
		"redis/cad/none/plain,renew=20":              "renew=20 with ttl=10: the key expires before the first renewal, so the watchdog never acts",
		"etcd/cad/none/plain,ttl=6,renew=6":          "renew=6 with ttl=6: the key expires before the first renewal",
		"redis/cad/none/plain,token=5":               "token=5 applies only with fence=write or rw",
		"redis/nope/rw/plain":                        `unknown release "nope" (allowed: del, get-del, cad)`,
		"redis/cad/both/plain":                       `unknown fence "both" (allowed: none, write, rw)`,
		"redis/cad/rw/mongo":                         `unknown storage "mongo"`,
		"redis/cad/rw/plain,clients=9":               "clients=\"9\": want a whole number from 1 to 8",
		"redis/cad/rw/plain,ttl=x":                   "ttl=\"x\"",
		"redis/cad/rw/plain,color=red":               `unknown design parameter "color"`,
		"redis/cad/rw/plain,ttl":                     "want key=value",
		"redis/cad/rw/plain,ttl=1,ttl=2":             "given twice",
		"redis/cad/rw/plain,acquire=lua":             `unknown acquire "lua"`,
		"redis/cad/rw/plain,nodes=3":                 "nodes does not apply to lock redis (it applies to: redlock)",
		"db/cad/rw/plain":                            "fence rw is not available for lock db (allowed: none;",
		"zookeeper/del/none/plain":                   "release del is not available for lock zookeeper (allowed: cad)",
		"etcd/cad/none/plain,acquire=incr-after":     "acquire does not apply to lock etcd",
		"db/cad/none/plain,storage-failovers=1":      "storage-failovers and stale-reads do not apply to lock db",
		"db/cad/none/plain,stale-reads=1":            "storage-failovers and stale-reads do not apply to lock db",
		"redis/cad/rw/max-token,storage-loses=fence": "storage-loses=fence applies only with storage-failovers=1",
		"redis/cad/rw/max-token,storage-failovers=1,stale-reads=1,storage-loses=fence":         "storage-loses=fence does not apply with stale-reads",
		"redis/cad/rw/cond-update,fence-check=two-step":                                        "fence-check=two-step applies only to storage max-token or max-write (allowed for cond-update: atomic)",
		"redis/cad/none/cas,fence-check=two-step":                                              "fence-check=two-step applies only to storage max-token or max-write (allowed for cas: atomic)",
		"redis/cad/rw/plain,fence-check=two-step":                                              "fence-check=two-step applies only to storage max-token or max-write (allowed for plain: atomic)",
		"redis/cad/none/max-token,fence-check=two-step":                                        "fence-check=two-step needs fence=write or rw",
		"redis/cad/rw/max-token,fence-check=two-step,losses=1,timeout=3":                       "fence-check=two-step does not apply with timeout=3",
		"redis/cad/rw/max-token,fence-check=two-step,delays=1":                                 "fence-check=two-step does not apply with delays at the write (delay-at=any)",
		"redis/cad/rw/max-token,fence-check=two-step,delays=1,delay-at=write":                  "fence-check=two-step does not apply with delays at the write (delay-at=write)",
		"redis/cad/rw/max-token,fence-check=2":                                                 `unknown fence-check "2" (allowed: atomic, two-step)`,
		"redlock/cad/none/plain,counter=external":                                              "counter=external needs fence=write or rw",
		"db/cad/write/max-token,counter=external":                                              "counter=external does not apply to db with tx=inside",
		"redis/cad/rw/max-token,counter=external":                                              "counter does not apply to lock redis",
		"redlock/cad/none/plain,counter-crashes=1":                                             "counter-crashes applies only with counter=external",
		"zookeeper/cad/none/plain,lock-delay=3":                                                "lock-delay does not apply to lock zookeeper",
		"redis/cad/none/plain,watchdog=thread":                                                 "watchdog=thread applies only with renew ≥ 1",
		"redis/cad/none/plain,hangs=1":                                                         "hangs applies only with renew ≥ 1",
		"redis/cad/none/plain,watchdog=sidecar":                                                "watchdog=sidecar applies only with renew ≥ 1",
		"redis/cad/none/plain,watchdog=sidecar,renew=3,restarts=1":                             "restarts does not apply with watchdog=sidecar",
		"redis/cad/none/plain,watchdog=session,renew=3":                                        "watchdog=session applies only to lock etcd",
		"etcd/cad/none/plain,watchdog=session":                                                 "watchdog=session applies only with renew ≥ 1",
		"zookeeper/cad/none/plain,watchdog=sidecar,session=5":                                  "watchdog does not apply to lock zookeeper",
		"redis/cad/rw/plain,stale-reads=3":                                                     "stale-reads=\"3\": want a whole number from 0 to 2",
		"redis/cad/none/plain,ack=wait":                                                        "ack does not apply to lock redis (it applies to: replica)",
		"replica/cad/none/plain,ack-timeout=2":                                                 "ack-timeout applies only with ack=wait",
		"replica/cad/none/plain,ack=later":                                                     "unknown ack \"later\" (allowed: async, wait)",
		"redis/cad/none/plain,replicas=2":                                                      "replicas does not apply to lock redis (it applies to: replica)",
		"replica/cad/none/plain,replicas=5":                                                    "replicas=\"5\": want a whole number from 1 to 4",
		"replica/cad/none/plain,failovers=3":                                                   "failovers=\"3\": want a whole number from 0 to 2",
		"replica/cad/none/plain,promote=any":                                                   "promote=any applies only with replicas ≥ 2",
		"replica/cad/none/plain,promote=any,replicas=2,failovers=0":                            "promote=any applies only with failovers ≥ 1",
		"replica/cad/none/plain,rejoin=3,failovers=0":                                          "rejoin applies only with failovers ≥ 1",
		"replica/cad/none/plain,rejoin=3,partition=primary,partitions=1":                       "rejoin does not apply with partition=primary",
		"redis/cad/none/plain,promote=any":                                                     "promote does not apply to lock redis (it applies to: replica)",
		"replica/cad/none/plain,replicas=2,acks=2":                                             "acks applies only with ack=wait",
		"replica/cad/none/plain,ack=wait,acks=2":                                               "acks=2 with replicas=1: WAIT would wait for more replicas than there are; want acks from 1 to 1",
		"replica/cad/none/plain,replicas=2,partition=primary,partitions=1":                     "partition=primary does not apply with replicas=2",
		"replica/cad/rw/max-token,replicas=4,node-crashes=1,persist=1,fsync=1":                 "fsync does not apply with replicas=4: no node slot is left",
		"redis/cad/rw/max-token,node-crashes=1,fsync=1":                                        "fsync applies only with persist=1",
		"redlock/cad/none/plain,node-crashes=1,persist=1,fsync=1":                              "fsync does not apply to lock redlock",
		"redis/cad/none/plain,value=process":                                                   "value=process applies only with jobs ≥ 2",
		"zookeeper/cad/none/plain,jobs=2,value=process":                                        "value=process applies only to locks redis, replica and etcd",
		"redis/del/none/plain,jobs=2,value=process":                                            "value=process needs release=cad",
		"redis/cad/none/plain,jobs=2,value=process":                                            "it needs delays ≥ 1, timeout ≥ 1 and delay-at=release",
		"redis/cad/none/plain,jobs=2,value=process,delays=1,timeout=3,delay-at=read":           "it needs delays ≥ 1, timeout ≥ 1 and delay-at=release",
		"redis/cad/none/plain,jobs=2,delays=1,timeout=3":                                       "a late first copy of a write would outlive its job",
		"redis/cad/none/plain,jobs=9":                                                          "jobs=\"9\": want a whole number from 1 to 8",
		"redis/cad/none/plain,value=thread":                                                    `unknown value "thread"`,
		"redis/cad/none/plain,abandon=retry":                                                   "abandon=retry acts on an acquire held past the timeout: it needs delays ≥ 1, timeout ≥ 1 and delay-at=acquire",
		"redis/cad/none/plain,abandon=fail,delays=1,timeout=3":                                 "it needs delays ≥ 1, timeout ≥ 1 and delay-at=acquire",
		"redis/cad/none/plain,abandon=fail,delays=1,timeout=3,delay-at=acquire,max-delay=3":    "abandon=fail needs max-delay above the timeout",
		"redis/cad/none/plain,abandon=retry,delays=1,timeout=3,delay-at=acquire,check=acquire": "abandon=retry does not apply with check=acquire",
		"redis/cad/none/plain,abandon=retry,delays=1,timeout=3,delay-at=acquire,jobs=2":        "an abandoned acquire landing in a later job or process is not modelled",
		"redis/cad/none/plain,abandon=retry,delays=1,timeout=3,delay-at=acquire,reenter=nx":    "does not apply to a nested acquire",
		"etcd/cad/none/plain,abandon=retry":                                                    "abandon does not apply to lock etcd",
		"redis/cad/none/plain,node-at=read":                                                    "node-at applies only with node-crashes, jumps or (replica) failovers ≥ 1",
		"redis/cad/none/plain,fault-node=1":                                                    "fault-node applies only with node-crashes, jumps or (replica) failovers ≥ 1",
		"redis/cad/none/plain,node-crashes=1,fault-node=2":                                     "fault-node=2: lock redis has 1 node(s) that fail",
		"redlock/cad/none/plain,node-crashes=1,nodes=3,fault-node=4":                           "fault-node=4: lock redlock has 3 node(s) that fail",
		"redis/cad/none/plain,node-crashes=1,node-at=acquire":                                  "node-at=acquire: a key's holder takes no acquire step",
		"redis/cad/none/plain,node-crashes=1,node-at=del":                                      "node-at=del: this design's clients send no such request",
		"etcd/cad/none/plain,node-at=read":                                                     "node-at does not apply to lock etcd",
		"redis/cad/none/plain,value=acquire":                                                   `value=acquire acts on a failed attempt's late release: it needs check=acquire, delays ≥ 2`,
		"redis/cad/none/plain,value=acquire,check=acquire,delays=2,timeout=3,delay-at=release": "it needs check=acquire, delays ≥ 2, timeout ≥ 1 and delay-at=acquire (or any)",
		"etcd/cad/none/plain,value=acquire":                                                    "value=acquire applies only to locks redis and replica",
		"redis/del/none/plain,value=acquire,check=acquire,delays=2,timeout=3":                  "value=acquire needs release=cad",
		"redis/cad/none/plain,check=acquire,delays=2,timeout=3,jobs=2,delay-at=acquire":        "a failed attempt's late release meeting a later job's lock is not modelled; set jobs=1",
		"zookeeper/cad/none/plain,restarts=1":                                                  "restarts does not apply to lock zookeeper",
		"redis/cad/none/plain,restarts=1,delays=1,timeout=3":                                   "a late first copy of a write would outlive its process",
		"redis/cad/none/plain,restarts=3":                                                      "restarts=\"3\": want a whole number from 0 to 2",
		"etcd-mutex/get-del/none/plain":                                                        "release get-del is not available for lock etcd-mutex (allowed: del, cad)",
		"etcd-mutex/del/none/plain,renew=3":                                                    "renew does not apply to lock etcd-mutex",
		"etcd-mutex/del/none/plain,lock-delay=3":                                               "lock-delay does not apply to lock etcd-mutex",
		"etcd-mutex/del/none/plain,restarts=1":                                                 "restarts does not apply to lock etcd-mutex: the crashed process's key lives on",
		"etcd-mutex/del/none/plain,session-check=maybe":                                        `unknown session-check "maybe" (allowed: get, none)`,
		"redis/cad/none/plain,session-check=none":                                              "session-check does not apply to lock redis",
		"zookeeper/cad/none/plain,readers=1":                                                   "design parameter readers does not apply to lock zookeeper (it applies to: etcd-mutex)",
		"etcd-mutex/del/none/plain,readers=3":                                                  "readers=3: want at most clients−1 = 2",
		"etcd-mutex/del/none/plain,readers=8":                                                  `readers="8": want a whole number from 0 to 7`,
		"etcd-mutex/cad/none/plain,readers=1":                                                  "readers=K needs release=del",
		"etcd-mutex/del/rw/max-token,readers=1":                                                "readers=K takes fence=none or write",
		"lease/cad/none/plain":                                                                 "lock lease needs renew ≥ 1",
		"lease/del/none/plain,renew=2":                                                         "release del is not available for lock lease (allowed: cad)",
		"lease/cad/none/plain,renew=2,deadline=2":                                              "client-go requires LeaseDuration > RenewDeadline > RetryPeriod",
		"lease/cad/none/plain,renew=2,lease-b=5":                                               "candidate B's lease duration 5, renew deadline 7",
		"lease/cad/none/plain,renew=2,rate-b=300":                                              "rate-b=\"300\": want a whole number from 50 to 200",
		"lease/cad/none/plain,renew=2,rate-b=200,horizon=120,client-jumps=1,client-jump=20":    "candidate B's clock would pass 250 ticks",
		"lease/cad/none/plain,renew=2,clients=1,rate-b=150":                                    "they need clients ≥ 2",
		"redis/cad/none/plain,deadline=5":                                                      "deadline does not apply to lock redis",
		"lease/cad/none/plain,renew=2,node-crashes=1":                                          "node-crashes does not apply to lock lease",
		"advisory/cad/rw/max-token":                                                            "an advisory lock hands out no fencing token",
		"advisory/del/none/plain":                                                              "release del is not available for lock advisory (allowed: cad)",
		"advisory/cad/none/plain,delays=1,timeout=3":                                           "a PostgreSQL client does not resend a statement",
		"advisory/cad/none/plain,renew=3":                                                      "renew does not apply to lock advisory",
		"advisory/cad/none/plain,level=row":                                                    `unknown level "row" (allowed: session, xact)`,
		"advisory/cad/none/plain,pool=session":                                                 `unknown pool "session" (allowed: none, tx, tx-reset)`,
		"redis/cad/none/plain,pool=tx":                                                         "pool does not apply to lock redis",
		"db/cad/none/plain,level=xact":                                                         "level does not apply to lock db",
		"advisory/cad/none/plain,partition=storage,partitions=1":                               "partition=storage does not apply to lock advisory",
		"advisory/cad/none/plain,stale-reads=1":                                                "do not apply to lock advisory: the counter is in the lock's own database",
		"advisory/cad/none/plain,lock-delay=3":                                                 "lock-delay does not apply to lock advisory",
		"redis/cad/none/plain,extend=setnx":                                                    "extend applies only with renew ≥ 1",
		"redis/cad/none/plain,renew-fail=stop":                                                 "renew-fail applies only with renew ≥ 1",
		"redis/cad/none/plain,watchdog-stop=after-unlock":                                      "watchdog-stop applies only with renew ≥ 1",
		"etcd/cad/none/plain,renew=3,extend=setnx":                                             "extend does not apply to lock etcd",
		"redis/cad/none/plain,renew=3,extend=sometimes":                                        `unknown extend "sometimes" (allowed: check, setnx)`,
		"redis/cad/none/plain,renew=3,renew-fail=stop,reenter=nx":                              "renew-fail=stop does not apply with reenter=nx",
		"redis/cad/none/plain,renew=3,watchdog-stop=after-unlock,jobs=2":                       "watchdog-stop=after-unlock does not apply with jobs ≥ 2 or restarts",
		"redis/cad/none/plain,renew=3,watchdog=sidecar,watchdog-stop=after-unlock":             "does not apply with watchdog=sidecar",
		"etcd/cad/none/plain,check=acquire":                                                    "check=acquire applies only to lock redis or replica",
		"redlock/cad/none/plain,check=acquire":                                                 "redlock always checks its validity at acquire",
		"redis/cad/rw/max-token,acquire=incr-after,check=acquire":                              "check=acquire applies only with acquire=script",
		"replica/cad/none/plain,ack=wait,check=acquire":                                        "check=acquire does not apply with ack=wait",
		"redis/cad/none/plain,check=acquire,drift=10":                                          "no acquire ever has validity left",
		"advisory/cad/none/plain,end=keepalive,level=xact":                                     "end=keepalive applies only to level=session with pool=none",
		"advisory/cad/none/plain,end=keepalive,pool=tx":                                        "end=keepalive applies only to level=session with pool=none",
		"advisory/cad/none/plain,end=tcp":                                                      `unknown end "tcp" (allowed: idle, keepalive)`,
		"redis/cad/none/plain,lose=request":                                                    "lose applies only with losses ≥ 1",
		"redis/cad/none/plain,release-fail=forget":                                             "release-fail applies only with losses ≥ 1",
		"redis/cad/none/plain,losses=1,lose=packet,timeout=3":                                  `unknown lose "packet" (allowed: reply, request)`,
		"redis/cad/none/plain,losses=1,timeout=3,lose-at=read,release-fail=forget":             "release-fail=forget with lose-at=read: no release is ever lost",
		"redis/cad/none/plain,losses=1,lose-at=read":                                           "losses=1 needs timeout ≥ 1",
		"redlock/cad/none/plain,losses=1,timeout=2,release-fail=forget":                        "release-fail does not apply to lock redlock",
		"zookeeper/cad/none/plain,jobs=2,losses=1,timeout=2,release-fail=forget":               "release-fail=forget does not apply to lock zookeeper with jobs ≥ 2",
		"redis/cad/none/plain,renew=3,watchdog=sidecar,losses=1,timeout=2,release-fail=forget": "release-fail=forget does not apply with watchdog=sidecar",
		"zookeeper/cad/none/plain,protect=no":                                                  "protect=no applies only with losses ≥ 1 and lose-at=any or acquire",
		"zookeeper/cad/none/plain,protect=no,losses=1,timeout=3,lose-at=release":               "protect=no applies only with losses ≥ 1 and lose-at=any or acquire",
		"redis/cad/none/plain,protect=no,losses=1,timeout=3":                                   "design parameter protect does not apply to lock redis",
		"zookeeper/cad/none/plain,protect=maybe":                                               `unknown protect "maybe" (allowed: yes, no)`,
		"consul/del/none/plain":                                                                "release del is not available for lock consul (allowed: cad)",
		"consul/cad/none/plain,index=modify":                                                   "index=modify applies only with fence=write or rw",
		"consul/cad/none/plain,renew=20":                                                       "the server invalidates the session 2 × ttl = 20 ticks after its last renewal",
		"consul/cad/none/plain,ttl=31":                                                         "the session lives 2 × ttl = 62 ticks, more than 60",
		"consul/cad/none/plain,behavior=keep":                                                  `unknown behavior "keep" (allowed: release, delete)`,
		"etcd/cad/none/plain,behavior=delete":                                                  "design parameter behavior does not apply to lock etcd",
		"redis/cad/rw/max-token,index=modify":                                                  "design parameter index does not apply to lock redis",
		"consul/cad/none/plain,node-crashes=1":                                                 "node-crashes does not apply to lock consul",
	}
	for name, want := range cases {
		_, err := ParseDesign(name)
		require.Error(t, err, name)
		require.Contains(t, err.Error(), want, name)
		require.NotContains(t, err.Error(), "\n")
	}
}

func FuzzParseDesign(f *testing.F) {
	for _, s := range []string{"redis/cad/rw/max-token", "demo2,clients=2", "redis/cad/none/plain,renew=10", "redsi/cad/none/plain,tll=5", "demo22", "redis/del/none/plain,work=12,bug=cad-no-check", "a/b/c/d,x=1", ",,,", "redis/cad/rw/plain,ttl=99999999999999999999", "redis/cad/none/plain,ttl=30,max-pause=35", "demo2,ttl=45,horizon=40", "zookeeper/cad/none/plain,session=30,work=9",
		"redlock/cad/none/plain,partition=minority,clients=2,partitions=2", "replica/cad/none/plain,partition=primary,partitions=1",
		"redis/del/none/plain,losses=1,timeout=3,lose-at=release", "redis/cad/none/plain,check=validity,pause-at=check,client-jumps=1,client-jump=-7",
		"redis/cad/none/plain,delays=1,delay-at=acquire,timeout=2", "db/cad/none/plain,partition=storage,partitions=1", "redis/cad/none/plain,crash-at=expire",
		"redis/cad/rw/max-token,storage-failovers=1", "redis/cad/rw/max-token,storage-failovers=1,storage-loses=fence", "redis/cad/rw/max-token,fence-check=two-step", "redis/cad/write/max-write,fence-check=two-step,crashes=1", "redis/cad/rw/cas,fence-check=two-step", "redis/cad/rw/max-token,fence-check=two-step,delays=1,delay-at=read", "redis/cad/none/cas,stale-reads=2", "db/cad/none/plain,stale-reads=1", "redis/cad/rw/max-token,storage-failovers=2",
		"redlock/cad/rw/max-token,counter=external,counter-crashes=1", "db/cad/write/cond-update,tx=outside,counter=external", "redlock/cad/none/plain,counter=service", "redlock/cad/none/plain,renew=3,quorum=all", "redis/cad/none/plain,lock-delay=8", "etcd/cad/none/plain,lock-delay=5,renew=3", "zookeeper/cad/none/plain,lock-delay=3",
		"redis/cad/none/plain,watchdog=thread,renew=3,hangs=1", "redis/cad/none/plain,watchdog=thread", "redis/cad/none/plain,hangs=1",
		"lease/cad/none/plain,renew=2", "lease/cad/rw/max-token,renew=2,duration=own,lease-b=5,deadline-b=3", "lease/cad/none/plain,renew=2,rate-b=50,client-jumps=1", "lease/cad/none/plain", "lease/cad/none/plain,renew=2,deadline=2",
		"advisory/cad/none/plain", "advisory/cad/none/plain,level=xact,pool=tx", "advisory/cad/none/cas,pool=tx-reset", "advisory/cad/none/plain,pool=", "advisory/cad/none/plain,level=xact,clients=2,crashes=1", "advisory/cad/rw/max-token,pool=tx", "advisory/cad/none/plain,end=keepalive,pauses=0,partitions=1,partition-ticks=5", "advisory/cad/none/plain,end=keepalive,level=xact",
		"zookeeper/cad/none/plain,protect=no,lose-at=acquire,pauses=0,losses=1,timeout=3", "zookeeper/cad/none/plain,protect=yes,losses=2,timeout=3", "zookeeper/cad/none/plain,protect=no", "etcd-mutex/del/none/plain,protect=no,losses=1,timeout=3",
		"consul/cad/none/plain,renew=5", "consul/cad/rw/max-token,behavior=delete,index=modify,renew=5", "consul/cad/rw/max-token,behavior=delete", "consul/cad/none/plain,lock-delay=0,ttl=30", "consul/cad/none/plain,index=modify", "consul/cad/none/plain,renew=19",
		"etcd-mutex/del/none/plain", "etcd-mutex/cad/rw/max-token,session=6", "etcd-mutex/del/none/plain,session-check=none,pause-at=acquire", "etcd-mutex/get-del/none/plain", "etcd-mutex/del/none/plain,session-check=", "etcd-mutex/del/none/plain,clients=2,jobs=2,pauses=0,delays=1,timeout=3,delay-at=release",
		"etcd-mutex/del/none/plain,readers=1,session-check=none,pause-at=acquire", "etcd-mutex/del/write/max-write,readers=2,clients=4", "etcd-mutex/del/none/plain,readers=3", "etcd-mutex/cad/none/plain,readers=1", "zookeeper/cad/none/plain,readers=1", "etcd-mutex/del/none/plain,readers=-1",
		"redis/cad/none/plain,jobs=2,bypass=0", "zookeeper/cad/none/plain,bypass=3", "redlock/cad/none/plain,bypass=0", "db/cad/none/plain,bypass=1", "redis/cad/none/plain,clients=1,bypass=0", "redis/cad/none/plain,bypass=-2",
		"redis/cad/none/plain,watchdog=sidecar,renew=3", "redis/cad/none/plain,watchdog=sidecar,pauses=0,crashes=1,renew=3", "redis/cad/none/plain,watchdog=sidecar,renew=3,restarts=1", "zookeeper/cad/none/plain,watchdog=sidecar",
		"redis/cad/rw/max-token,node-crashes=1,persist=1,fsync=1", "replica/cad/rw/cond-update,node-crashes=1,persist=1,fsync=3", "redis/cad/rw/max-token,fsync=1", "redlock/cad/none/plain,node-crashes=1,persist=1,fsync=1",
		"redis/cad/none/plain,value=process,delay-at=release,clients=2,jobs=2,pauses=0,delays=1,timeout=3", "redis/cad/none/plain,jobs=3", "etcd/cad/none/plain,jobs=2,value=job", "redis/cad/none/plain,jobs=2,value=process",
		"redis/cad/none/plain,acquire=set-expire,clients=2,pauses=0,restarts=1", "db/cad/none/plain,restarts=2", "zookeeper/cad/none/plain,restarts=1", "redis/cad/none/plain,jobs=3,restarts=2,delays=1,timeout=2,delay-at=release",

		"replica/cad/rw/max-token,ack=wait,ack-timeout=2", "replica/cad/none/plain,ack=wait,check=validity", "replica/cad/none/plain,ack-timeout=2", "redis/cad/none/plain,ack=wait",
		"redis/cad/none/plain,extend=setnx,renew=3", "redlock/cad/none/plain,extend=setnx,renew=3", "redis/cad/none/plain,extend=setnx", "etcd/cad/none/plain,extend=setnx,renew=3",
		"redis/cad/none/plain,renew-fail=stop,renew=3", "etcd/cad/none/plain,renew-fail=stop,renew=3", "redis/cad/none/plain,renew-fail=stop,renew=3,reenter=owner",
		"redis/cad/none/plain,extend=setnx,watchdog-stop=after-unlock,clients=2,pauses=0,renew=2", "redis/cad/none/plain,watchdog-stop=after-unlock,renew=3,jobs=2",
		"redis/cad/none/plain,check=acquire,delay-at=acquire,pauses=0,delays=1", "redis/cad/none/plain,check=acquire,drift=9", "redlock/cad/none/plain,check=acquire",
		"zookeeper/cad/none/plain,pauses=0,clients=2,losses=1,lose=request,lose-at=release,release-fail=forget,timeout=3", "redis/cad/none/plain,losses=1,lose=request,timeout=3", "redis/cad/none/plain,losses=1,lose-at=release,release-fail=forget,timeout=3",
		"redis/get-del/none/plain,losses=2,lose=request,lose-at=del,release-fail=forget", "etcd/cad/none/plain,losses=1,release-fail=forget,timeout=2", "redis/cad/none/plain,release-fail=forget",
		"redis/cad/none/plain,check=acquire,value=acquire,delay-at=acquire,ttl=5,drift=2,clients=4,pauses=0,delays=2,timeout=3,max-delay=6", "redis/cad/none/plain,value=acquire", "replica/cad/none/plain,check=acquire,value=acquire,delays=2,timeout=2", "redis/cad/none/plain,check=acquire,delays=2,timeout=3,jobs=2",
		"redis/cad/rw/max-token,pauses=0,node-crashes=1,persist=1,fsync=1,node-at=read", "redlock/cad/none/plain,node-crashes=1,node-at=write,fault-node=3", "replica/cad/none/plain,node-at=release", "replica/cad/none/plain,fault-node=2", "redis/cad/none/plain,jumps=1,node-at=acquire,reenter=nx", "redis/cad/none/plain,fault-node=1",
		"redis/cad/none/plain,acquire=set-expire,abandon=retry,delay-at=acquire,pauses=0,delays=1,timeout=3", "redis/cad/none/plain,abandon=fail,delay-at=acquire,clients=4,pauses=0,delays=1,timeout=2", "replica/cad/none/plain,abandon=retry,delays=1,timeout=2,delay-at=acquire", "redis/cad/none/plain,abandon=retry", "redis/cad/none/plain,abandon=fail,delays=1,timeout=3,delay-at=acquire,max-delay=3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		d, err := ParseDesign(name)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error for %q: %v", name, err)
			}
			return
		}
		again, err := ParseDesign(d.Name())
		if err != nil || again != d {
			t.Fatalf("%q: canonical name %q does not parse back (%v)", name, d.Name(), err)
		}
	})
}

func FuzzParseScenario(f *testing.F) {
	for n := 1; n <= 6; n++ {
		text, _ := scenarioFiles.ReadFile("scenarios/demo" + string(rune('0'+n)) + ".txt")
		f.Add(string(text))
	}
	for _, n := range []string{"redlock-partition", "split-brain", "lost-release", "resent-write", "client-clock", "acquire-reply-delay", "storage-failover", "storage-failover-fence", "two-step-fence", "stale-read", "lock-delay", "redlock-counter", "redlock-renew", "hung-worker", "sidecar-pause", "sidecar-crash", "everysec-key", "everysec-token", "late-release-process", "late-release-job", "restart", "restart-set-expire", "starvation", "replica-wait-timeout", "replica-wait-two", "replica-promote-any", "replica-two-failovers", "replica-rejoin", "etcd-mutex-waiter", "etcd-mutex-no-get", "etcd-rwmutex-no-get", "etcd-mutex-late-unlock", "etcd-mutex-fenced-unlock", "advisory-session-pause", "advisory-xact-pause", "advisory-pool-reentry", "advisory-pool-reset", "advisory-pool-xact", "advisory-keepalive-partition", "lease-pause", "lease-own-duration", "lease-clock-rate", "release-forget-zookeeper", "release-forget-redis", "release-retry", "zookeeper-unprotected", "zookeeper-protected", "zookeeper-lost-create", "attempt-release-job", "attempt-release-acquire", "node-crash-at-read", "abandoned-acquire", "abandoned-acquire-fail", "consul-pause", "consul-delete-index", "bypass-polling", "session-reply"} {
		text, _ := scenarioFiles.ReadFile("scenarios/" + n + ".txt")
		f.Add(string(text))
	}
	f.Add("design demo1\nA acquire\ntick 3\nZ read\n")
	f.Add("# x\ndesign redis/cad/none/plain,clients=1\nA pause 99\n")
	f.Fuzz(func(t *testing.T, text string) {
		sc, err := ParseScenario(text)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "line ") && !strings.HasPrefix(err.Error(), "no design line") {
				t.Fatalf("error does not name the line: %v", err)
			}
			return
		}
		if len(sc.Lines) != len(sc.Trace) {
			t.Fatalf("%d lines for %d steps", len(sc.Lines), len(sc.Trace))
		}
		again, err := ParseScenario(sc.Format())
		if err != nil {
			t.Fatalf("formatted scenario does not parse: %v\n%s", err, sc.Format())
		}
		require.Equal(t, sc.Trace, again.Trace)
		require.Equal(t, sc.Design, again.Design)
		// replaying never panics; an impossible step is an error
		_, _ = Replay(&sc.Design, sc.Trace)
	})
}

func FuzzParseAction(f *testing.F) {
	for _, s := range []string{"tick", "A acquire", "B pause 14", "C crash", "H slow", "A pause 0", "I read",
		"A partition 2", "A clock-jump", "clock-jump 3", "A lose", "B arrive", "partition 1", "A partition 9",
		"storage-sync", "storage-failover", "A stale-read", "counter-crash", "A counter-crash", "A storage-failover", "stale-read", "A wait", "wait", "A wait 3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAction(s)
		if err != nil {
			return
		}
		b, err := ParseAction(a.String())
		require.NoError(t, err)
		require.Equal(t, a, b)
	})
}

// randomWalk follows random enabled actions from Init, calling visit on
// every state it passes.
func randomWalk(d *Design, rng *rand.Rand, visit func(s State, a Action, next State, ev Event)) {
	s := Init(d)
	var buf []Action
	for k := 0; k < 400; k++ {
		buf = Actions(d, &s, buf)
		if len(buf) == 0 {
			return
		}
		a := buf[rng.IntN(len(buf))]
		next, ev := Step(d, s, a)
		visit(s, a, next, ev)
		s = next
	}
}

var walkDesigns = []string{
	"redis/cad/none/plain,crashes=1,slow=1",
	"redis/del/rw/max-token,acquire=incr-before,crashes=1",
	"redis/get-del/write/max-write,acquire=incr-after,pauses=2",
	"redis/cad/rw/cond-update,acquire=set-expire,crashes=1",
	"redis/cad/none/cas,clock=free,clients=4",
	"redis/cad/rw/max-token,renew=3,check=validity,delays=1,crashes=1,node-crashes=1,jumps=1",
	"redis/cad/none/plain,wait=notify,crashes=1",
	"replica/get-del/rw/max-token,crashes=1",
	"redlock/cad/none/plain,node-crashes=1,jumps=1,restart=3",
	"redlock/get-del/none/cas,quorum=all,clients=2,node-crashes=1,persist=1",
	"etcd/cad/rw/max-token,renew=2,crashes=1",
	"zookeeper/cad/write/cond-update,crashes=1,session=4",
	"db/cad/none/plain,crashes=1",
	"db/cad/none/plain,tx=outside,delays=1",
	"etcd-mutex/del/none/plain,readers=1,session-check=none,crashes=1",
	"etcd-mutex/del/write/max-write,readers=2,clients=4,jobs=2,delays=1,timeout=3,delay-at=release",
}

func TestStepIsPureAndDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, name := range walkDesigns {
		d, err := ParseDesign(name)
		require.NoError(t, err)
		for w := 0; w < 50; w++ {
			randomWalk(&d, rng, func(s State, a Action, next State, ev Event) {
				before := s
				n2, ev2 := Step(&d, s, a)
				require.Equal(t, before, s, "Step changed its input")
				require.Equal(t, next, n2)
				require.Equal(t, ev, ev2)
				require.Equal(t, next.Fingerprint(), n2.Fingerprint())
				require.LessOrEqual(t, int(next.Now), d.HorizonTicks)
				require.LessOrEqual(t, next.Store.Counter, next.Store.Accepted, "counter above accepted writes")
			})
		}
	}
}

// Symmetry is sound: the canonical form of a state has, up to canonical
// form, the same successors as the state itself.
func TestCanonicalPreservesSuccessors(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	succ := func(d *Design, s State) []uint64 {
		var out []uint64
		for _, a := range Actions(d, &s, nil) {
			n, _ := Step(d, s, a)
			c := Canonical(d, n)
			out = append(out, c.Fingerprint())
		}
		sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
		return out
	}
	for _, name := range walkDesigns {
		d, err := ParseDesign(name)
		require.NoError(t, err)
		for w := 0; w < 30; w++ {
			randomWalk(&d, rng, func(s State, a Action, next State, ev Event) {
				c := Canonical(&d, next)
				require.Equal(t, c, Canonical(&d, c), "Canonical is not idempotent")
				require.Equal(t, succ(&d, next), succ(&d, c))
				for _, p := range Properties {
					if p.Expect == Always && p.Name != "exclusive" && p.Name != "own-release" {
						require.Equal(t, p.Bad(&d, &next, nil), p.Bad(&d, &c, nil), p.Name)
					}
				}
			})
		}
	}
}

// A key written at tick t with TTL d exists at t .. t+d-1 and is gone at t+d.
func TestKeyLifetime(t *testing.T) {
	d, err := ParseDesign("redis/cad/none/plain,clients=1,ttl=3,work=10,pauses=0")
	require.NoError(t, err)
	s := Init(&d)
	s, ev := Step(&d, s, Action{Kind: ActAcquire})
	require.Equal(t, ResOK, ev.Result)
	s, _ = Step(&d, s, Action{Kind: ActRead})
	set := int(s.Now)
	for s.Now < 10 {
		require.Equal(t, []Action{{Kind: ActTick}}, Actions(&d, &s, nil))
		s, ev = Step(&d, s, Action{Kind: ActTick})
		alive := int(s.Now) <= set+3-1
		require.Equal(t, alive, s.KeyOwner(0) == 0, "t=%d", s.Now)
		if int(s.Now) == set+3 {
			require.NotZero(t, ev.Flags&EvExpiredHeld)
		}
	}
}

func TestUrgentClockWaitsForClients(t *testing.T) {
	d, err := ParseDesign("redis/cad/none/plain,pauses=0")
	require.NoError(t, err)
	s := Init(&d)
	require.False(t, Enabled(&d, &s, Action{Kind: ActTick}), "time moves while clients can act")
	free := d
	free.Clock = ClockFree
	require.True(t, Enabled(&free, &s, Action{Kind: ActTick}))
}

func TestProgressCatchesAKeyThatNeverExpires(t *testing.T) {
	d, err := ParseDesign("redis/cad/none/plain,acquire=set-expire,crashes=1,pauses=0")
	require.NoError(t, err)
	r, err := Replay(&d, []Action{
		{Kind: ActAcquire, Client: A},
		{Kind: ActCrash, Client: A}, // before its EXPIRE
	})
	require.NoError(t, err)
	seq, v := r.Violated("progress")
	require.True(t, v)
	require.Equal(t, 2, seq)
}

// TestCrashedClientRenewsNothing: a client that crashed with its write in
// flight never released, so watchdog-stop=after-unlock's late renewal is
// not its: its watchdog died with it (locktest's crashed client holds its
// lock traffic, and such a renewal hung there).
func TestCrashedClientRenewsNothing(t *testing.T) {
	d, err := ParseDesign("redis/cad/none/plain,delay-at=write,slow=1,crashes=1,delays=1,clients=2,renew=2,watchdog-stop=after-unlock")
	if err != nil {
		t.Fatal(err)
	}
	var trace []Action
	for _, w := range []string{"A acquire", "A read", "B acquire", "B pause 12", "tick", "tick", "A delay 10", "A crash"} {
		a, err := ParseAction(w)
		if err != nil {
			t.Fatal(err)
		}
		trace = append(trace, a)
	}
	run, err := Replay(&d, trace)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range Actions(&d, &run.Final, nil) {
		if a.Kind == ActRenew && a.Client == 0 {
			t.Fatalf("A crashed with its write in flight, and still renews at t=%d: %v", run.Final.Now, Actions(&d, &run.Final, nil))
		}
	}
}
