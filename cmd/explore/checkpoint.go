package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"lockcheck/explore"
)

// checkpoint.go: explore check's -checkpoint, -checkpoint-every and
// -resume (explore.Checkpoint). With a checkpoint folder, SIGINT or
// SIGTERM finishes the level being searched, writes a checkpoint and
// stops (a second signal kills at once; the last checkpoint stays whole).

// ckArgs are the checkpoint flags, parsed.
type ckArgs struct {
	dir    string        // where checkpoints go; "" = none
	every  time.Duration // between checkpoints, at level boundaries
	resume string        // the folder to resume from; "" = a new search
}

type ckFlagSet struct {
	dir, resume *string
	every       *time.Duration
}

// defaultCheckpointEvery is how often a long search writes a checkpoint.
const defaultCheckpointEvery = 5 * time.Minute

func addCheckpointFlags(fs *flag.FlagSet) ckFlagSet {
	return ckFlagSet{
		dir:    fs.String("checkpoint", "", "write the search's state into this folder at level boundaries (every -checkpoint-every) and on SIGINT/SIGTERM, which then end the search at the end of its level; -resume goes on from it"),
		every:  fs.Duration("checkpoint-every", defaultCheckpointEvery, "with -checkpoint: the time between checkpoints (a Go duration: 30s, 5m, 1h; 0: only on a signal)"),
		resume: fs.String("resume", "", "go on from the checkpoint in this folder (the same design, properties and bounds; -workers and -frontier-dir may differ), and keep checkpointing there unless -checkpoint names another folder"),
	}
}

// parse checks the flags; set names the flags given.
func (f ckFlagSet) parse(set map[string]bool) (ckArgs, error) {
	a := ckArgs{dir: *f.dir, every: *f.every, resume: *f.resume}
	if set["checkpoint"] && a.dir == "" {
		return a, fmt.Errorf("-checkpoint: empty (want a folder)")
	}
	if set["resume"] && a.resume == "" {
		return a, fmt.Errorf("-resume: empty (want the folder of a checkpoint)")
	}
	if set["checkpoint-every"] && a.dir == "" && a.resume == "" {
		return a, fmt.Errorf("-checkpoint-every %s: only with -checkpoint or -resume", a.every)
	}
	if a.every < 0 {
		return a, fmt.Errorf("-checkpoint-every %s: want 0 (only on a signal) or more", a.every)
	}
	if a.resume != "" {
		if fi, err := os.Stat(a.resume); err != nil || !fi.IsDir() {
			return a, fmt.Errorf("-resume %s: not a folder", a.resume)
		}
		if _, err := os.Stat(filepath.Join(a.resume, explore.CheckpointFile)); err != nil {
			return a, fmt.Errorf("-resume %s: no checkpoint (%s) in the folder", a.resume, explore.CheckpointFile)
		}
		if a.dir == "" {
			a.dir = a.resume
		}
	}
	if a.dir != "" {
		if err := checkOutDir(a.dir); err != nil {
			return a, fmt.Errorf("-checkpoint %s: %v", a.dir, err)
		}
	}
	return a, nil
}

// configure sets cfg's checkpoint and resume: a signal (ctx) then ends the
// search at a level boundary, after a checkpoint, instead of at once.
func (a ckArgs) configure(cfg *explore.Config, ctx context.Context, signalled func() string, pp *progressPrinter) {
	cfg.Resume = a.resume
	if a.resume != "" {
		pp.line(fmt.Sprintf("resuming from the checkpoint in %s", a.resume))
	}
	if a.dir == "" {
		return
	}
	cfg.Context = nil
	context.AfterFunc(ctx, func() {
		if sig := signalled(); sig != "" {
			pp.line(fmt.Sprintf("%s: finishing the level to write a checkpoint (a second signal kills at once; the last checkpoint stays)", sig))
		}
	})
	cfg.Checkpoint = &explore.Checkpoint{Dir: a.dir, Every: a.every, Stop: ctx, Written: func(ci explore.CheckpointInfo) {
		pp.line(fmt.Sprintf("checkpoint: %s (depth %d, %s states, %.1f MB); go on with -resume %s", ci.Path, ci.Depth, thousands(ci.States), float64(ci.Bytes)/(1<<20), a.dir))
	}}
}
