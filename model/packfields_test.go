package model

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// The fields Packing keeps are the ones the design's features set: on
// every catalogue-like base design with every fault and feature parameter
// added one at a time, random runs reach no state with a byte the
// packing leaves out (Pack checks it), and the packed state unpacks to
// itself.
func TestPackKeepsEveryFieldAFeatureSets(t *testing.T) {
	bases := []string{
		"redis/cad/rw/max-token", "redis/del/none/plain,acquire=set-expire", "redis/get-del/write/cond-update",
		"replica/cad/rw/max-token", "redlock/cad/none/plain", "redlock/get-del/rw/max-token",
		"etcd/cad/rw/max-token", "zookeeper/cad/none/plain", "db/cad/none/plain",
		"redis/cad/none/cas", "redis/cad/rw/max-token,counter=external", "redis/cad/none/plain,check=validity",
		"redis/cad/none/plain,acquire=incr-before", "redis/cad/none/plain,persist=1,fsync=1",
	}
	extras := []string{""}
	for _, p := range intParams {
		switch p.name {
		case "clients", "horizon", "token", "ttl", "work", "max-pause":
			continue
		}
		extras = append(extras, p.name+"=1", p.name+"=3")
	}
	extras = append(extras, "ack=wait,ack-timeout=3", "wait=notify", "value=process,jobs=2", "check=validity,client-jumps=1",
		"partition=node,partitions=1", "partition=minority,partitions=1", "delays=1,timeout=2,jobs=2", "delays=1,timeout=2", "delays=1,timeout=2,delay-at=release", "delays=1,timeout=2,delay-at=acquire", "delays=1,timeout=2,delay-at=release,jobs=2,value=process")
	rng := rand.New(rand.NewPCG(7, 8))
	designs := 0
	for _, base := range bases {
		for _, extra := range extras {
			name := base
			if extra != "" {
				name += "," + extra
			}
			d, err := ParseDesign(name)
			if err != nil || d.Validate() != nil {
				continue // not every parameter goes with every design
			}
			designs++
			pk := NewPacking(&d)
			buf := make([]byte, pk.Size())
			var acts []Action
			for run := 0; run < 30; run++ {
				s := Init(&d)
				for step := 0; step < 150; step++ {
					if !pk.Pack(&s, buf) {
						t.Fatalf("%s: a state sets a field the packing leaves out:\n%+v", name, s)
					}
					var back State
					pk.Unpack(buf, &back)
					if back != s {
						t.Fatalf("%s: unpacked %+v, want %+v", name, back, s)
					}
					acts = Actions(&d, &s, acts)
					if len(acts) == 0 {
						break
					}
					s, _ = Step(&d, s, acts[rng.IntN(len(acts))])
				}
			}
		}
	}
	t.Logf("%d designs", designs)
	if designs < 200 {
		t.Fatalf("only %d designs parsed: the parameter names drifted? (%s)", designs, strings.Join(extras, " "))
	}
}
