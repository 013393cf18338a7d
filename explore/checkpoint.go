package explore

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unsafe"

	"lockcheck/model"
)

// checkpoint.go: a long search's state written to a file at level
// boundaries, so that a search stopped (Ctrl-C, a reboot, a kill) can go
// on from there (Config.Resume) and end exactly as the search that was
// never stopped: the same verdicts, traces and counts.
//
// At a level boundary the search is: the visited set (the fingerprint
// table's segments as they are, or the bitstate array), the trail (every
// state's action index and child count, and the child-count checkpoints),
// the frontier of the next level (packed states), the decided properties
// with their traces, the coverage and its counts, and a few numbers (depth,
// proved depth, the first id of the frontier, transitions). The per-worker
// caches (dedup.go) are not kept: they only drop steps the merge would find
// not new, so an empty cache changes nothing but time. The segments are
// written with their length and capacity, so that they grow as they would
// have, and the memory figures stay the same.
//
// The file is written to a temporary file in the same folder, synced, and
// renamed over the checkpoint (then the folder is synced): a kill at any
// moment leaves the previous checkpoint whole. It starts with a header
// (JSON, with its own CRC) naming what the search was: the design, the
// properties, the bounds, the format version, and hashes of the model's
// packing and of the model's behaviour on the design; a checkpoint that
// does not match the search asked for is refused with a one-line error.
// The body ends with a CRC-32C of all of it, checked before anything is
// used.

// CheckpointFile is the checkpoint's file name in its folder.
const CheckpointFile = "checkpoint.lockcheck"

// checkpointVersion is the file format's version.
const checkpointVersion = 2

var (
	checkpointMagic = []byte("LOCKCKPT")
	checkpointEnd   = []byte("LOCKEND\n")
	crcTable        = crc32.MakeTable(crc32.Castagnoli)
)

// Checkpoint makes a search write its state to Dir at level boundaries
// (Config.Checkpoint).
type Checkpoint struct {
	Dir string
	// Every: a checkpoint is written at the first level boundary after
	// Every has passed since the last one (or since the search began); 0:
	// only when Stop is done.
	Every time.Duration
	// Stop, when done, makes the search finish the level it is expanding,
	// write a checkpoint and stop (StoppedBy "interrupted", every step of
	// the finished levels checked). nil: never.
	Stop context.Context
	// Written is called after each checkpoint is in place, from the
	// search's goroutine; may be nil.
	Written func(CheckpointInfo)
}

// CheckpointInfo describes a checkpoint written.
type CheckpointInfo struct {
	Path   string
	Depth  int   // the levels below it are done
	States int64 // distinct states so far
	Bytes  int64 // the file's size
}

// checkpointHeader is the file's header: what search it is of.
type checkpointHeader struct {
	Design     string   `json:"design"`
	Properties []string `json:"properties"`
	Bounds     string   `json:"bounds"`
	Packing    string   `json:"packing"` // hash of the frontier's packing
	Model      string   `json:"model"`   // hash of the model's steps on the design (modelDigest)
	Depth      int      `json:"depth"`
	States     int64    `json:"states"`
}

// boundsKey is the part of the bounds that decides the result.
func boundsKey(b Bounds, cfg *Config) string {
	s := fmt.Sprintf("steps=%d states=%d memory=%d symmetry=%v bitstate=%d first=%v", b.MaxSteps, b.MaxStates, b.MaxMemory, b.Symmetry, b.Bitstate, cfg.First)
	if b.Compact {
		s += " compact"
	}
	if len(cfg.StopWhenViolated) > 0 {
		s += " stop-when=" + strings.Join(cfg.StopWhenViolated, ",")
	}
	if cfg.From != nil {
		var steps []string
		for _, a := range cfg.From {
			steps = append(steps, a.String())
		}
		s += " from=" + strings.Join(steps, ",")
	}
	return s
}

func propNames(props []model.Property) []string {
	var out []string
	for _, p := range props {
		out = append(out, p.Name+"/"+p.Expect.String())
	}
	return out
}

// packingDigest hashes what packing pk keeps of a state and where: for
// each byte of model.State, whether Pack keeps it (a state with only that
// byte set packs; one whose byte pk leaves out is refused) and the packed
// bytes it gives. A model whose State or packing changed gives another
// digest.
func packingDigest(pk model.Packing) string {
	h := crc32.New(crcTable)
	var s model.State
	b := unsafe.Slice((*byte)(unsafe.Pointer(&s)), unsafe.Sizeof(s))
	out := make([]byte, pk.Size()+packRoom)
	fmt.Fprintf(h, "%d/%d;", len(b), pk.Size())
	for k := range b {
		clear(b)
		b[k] = 0x5a
		clear(out)
		ok := pk.Pack(&s, out)
		fmt.Fprintf(h, "%d:%v:", k, ok)
		h.Write(out)
	}
	return fmt.Sprintf("%08x", h.Sum32())
}

// modelDigest hashes the model's behaviour on design d: the first
// digestStates states of a breadth-first walk (no symmetry), each step's
// action and the successor's packed bytes. A program whose model steps
// differently on the design (another order of Actions, another rule)
// gives another digest, so its checkpoint is refused.
func modelDigest(d *model.Design, pk model.Packing) string {
	const digestStates = 2000
	h := crc32.New(crcTable)
	st := pk.Size()
	seen := map[string]bool{}
	init := model.Init(d)
	buf := make([]byte, st+packRoom)
	pk.Pack(&init, buf)
	seen[string(buf[:st])] = true
	queue := []model.State{init}
	var acts []model.Action
	var ev model.Event
	for len(queue) > 0 && len(seen) < digestStates {
		s := queue[0]
		queue = queue[1:]
		acts = model.Actions(d, &s, acts)
		for _, a := range acts {
			ns := s
			model.StepTo(d, &ns, a, &ev)
			clear(buf)
			pk.Pack(&ns, buf)
			h.Write([]byte(a.String()))
			h.Write(buf[:st])
			if k := string(buf[:st]); !seen[k] {
				seen[k] = true
				queue = append(queue, ns)
			}
		}
	}
	return fmt.Sprintf("%08x", h.Sum32())
}

func (e *engine) header(depth int) checkpointHeader {
	return checkpointHeader{
		Design: e.d.Name(), Properties: propNames(e.props), Bounds: e.boundsKey,
		Packing: packingDigest(e.pk), Model: e.modelDigest, Depth: depth, States: int64(e.trail.n),
	}
}

// writeCheckpoint writes the search's state at a level boundary: depth
// levels are done, every step up to proved checked.
func (e *engine) writeCheckpoint(depth, proved int) error {
	c := e.ckpt
	if !e.ckCleaned {
		// a temporary file left by a search killed while it wrote
		old, _ := filepath.Glob(filepath.Join(c.Dir, ".checkpoint-*.tmp"))
		for _, p := range old {
			os.Remove(p)
		}
		e.ckCleaned = true
	}
	f, err := os.CreateTemp(c.Dir, ".checkpoint-*.tmp")
	if err != nil {
		return fmt.Errorf("explore: checkpoint: %w", err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	w := &ckWriter{w: bufio.NewWriterSize(f, 1<<20), crc: crc32.New(crcTable)}
	hd, err := json.Marshal(e.header(depth))
	if err != nil {
		return err
	}
	w.raw(checkpointMagic)
	w.u32(checkpointVersion)
	w.u32(uint32(len(hd)))
	w.raw(hd)
	w.u32(crc32.Checksum(hd, crcTable))
	w.body = true
	e.encode(w, depth, proved)
	if w.err == nil {
		w.body = false
		w.u32(w.crc.Sum32())
		w.raw(checkpointEnd)
		w.err = w.w.Flush()
	}
	if w.err != nil {
		return fmt.Errorf("explore: checkpoint: %w", w.err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("explore: checkpoint: %w", err)
	}
	size, _ := f.Seek(0, io.SeekCurrent)
	if err := f.Close(); err != nil {
		return fmt.Errorf("explore: checkpoint: %w", err)
	}
	path := filepath.Join(c.Dir, CheckpointFile)
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("explore: checkpoint: %w", err)
	}
	ok = true
	if d, err := os.Open(c.Dir); err == nil { // the rename itself to disk
		d.Sync()
		d.Close()
	}
	if c.Written != nil {
		c.Written(CheckpointInfo{Path: path, Depth: depth, States: int64(e.trail.n), Bytes: size})
	}
	return nil
}

// encode writes the body.
func (e *engine) encode(w *ckWriter, depth, proved int) {
	w.u64(uint64(depth))
	w.u64(uint64(proved))
	w.u64(uint64(e.base))
	w.u64(uint64(e.rep.Stats.Transitions))
	w.u64(uint64(e.peak))
	w.u64(math.Float64bits(time.Since(e.start).Seconds()))
	// the properties decided, with their traces
	w.u64(uint64(len(e.props)))
	for i := range e.props {
		r := &e.rep.Results[i]
		w.bool(e.done[i])
		w.str(string(r.Status))
		w.bool(r.Trace != nil)
		w.u64(uint64(len(r.Trace)))
		for _, a := range r.Trace {
			w.raw([]byte{byte(a.Kind), a.Client, a.Arg})
		}
	}
	// coverage
	w.u64(e.cov.Kinds)
	w.u8(e.cov.Witnessed())
	for k := range e.counts.Steps {
		w.int64s(e.counts.Steps[k][:])
	}
	w.int64s(e.counts.Phases[:])
	// the trail
	t := e.trail
	w.u64(uint64(t.n))
	w.u64(uint64(t.sealed))
	w.u64(uint64(t.total))
	w.u64(uint64(len(t.act)))
	for k := range t.act { // the bytes of the states numbered (the rest are zero)
		m := min(trailChunk, t.n-k*trailChunk)
		w.raw(t.act[k][:m])
		w.raw(t.kids[k][:m])
	}
	w.u64(uint64(len(t.cp)))
	w.u64(uint64(cap(t.cp)))
	w.raw(u32Bytes(t.cp))
	writeMap(w, t.wide)
	writeMap(w, t.wideK)
	// the visited set
	if e.bits != nil {
		b := e.bits
		w.u8(1)
		w.u64(uint64(len(b.words)))
		w.raw(u64Bytes(b.words))
		w.raw(u64Bytes(b.set))
		w.u64(math.Float64bits(b.fill))
		w.u64(math.Float64bits(b.missed))
		w.u64(uint64(b.stored))
	} else if e.cset != nil {
		w.u8(2)
		e.cset.encode(w)
	} else {
		w.u8(0)
		e.set.encode(w)
	}
	// the frontier
	w.u64(uint64(e.stride))
	w.u64(uint64(e.cur.n))
	if w.err != nil {
		return
	}
	if err := e.cur.each(e.stride, &e.pool, func(b []byte) error { w.raw(b); return w.err }); err != nil && w.err == nil {
		w.err = err
	}
}

// writeMap writes m's entries in key order, so that the same table gives
// the same bytes whatever the map's iteration order.
func writeMap[V uint16 | uint32](w *ckWriter, m map[uint32]V) {
	keys := make([]uint32, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	w.u64(uint64(len(keys)))
	for _, k := range keys {
		w.u64(uint64(k))
		w.u64(uint64(m[k]))
	}
}

// each calls f on the packed bytes of the frontier's states, block by
// block, in order; a block on disk is read into a pool block and given
// back.
func (f *frontier) each(stride int, p *blockPool, fn func([]byte) error) error {
	bs := blockStates()
	for k := 0; k*bs < f.n; k++ {
		n := min(bs, f.n-k*bs)
		b := f.blocks[k]
		if b != nil {
			if err := fn(b[:n*stride]); err != nil {
				return err
			}
			continue
		}
		b = p.get(bs)
		if _, err := f.file.ReadAt(b[:n*stride], int64(k)*int64(bs*stride)); err != nil {
			p.put(b)
			return fmt.Errorf("explore: frontier file: %w", err)
		}
		err := fn(b[:n*stride])
		p.put(b)
		if err != nil {
			return err
		}
	}
	return nil
}

func u64Bytes(s []uint64) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*8)
}

func u32Bytes(s []uint32) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*4)
}

// ckWriter writes little-endian numbers, keeping the first error and the
// body's CRC.
type ckWriter struct {
	w    *bufio.Writer
	crc  hash.Hash32
	body bool
	err  error
	b    [8]byte
}

func (w *ckWriter) raw(p []byte) {
	if w.err != nil {
		return
	}
	if w.body {
		w.crc.Write(p)
	}
	_, w.err = w.w.Write(p)
}

func (w *ckWriter) u8(v uint8) { w.b[0] = v; w.raw(w.b[:1]) }
func (w *ckWriter) bool(v bool) {
	if v {
		w.u8(1)
	} else {
		w.u8(0)
	}
}
func (w *ckWriter) u32(v uint32)  { binary.LittleEndian.PutUint32(w.b[:4], v); w.raw(w.b[:4]) }
func (w *ckWriter) u64(v uint64)  { binary.LittleEndian.PutUint64(w.b[:], v); w.raw(w.b[:]) }
func (w *ckWriter) uvar(v uint64) { w.raw(binary.AppendUvarint(w.b[:0], v)) }
func (w *ckWriter) str(s string)  { w.u64(uint64(len(s))); w.raw([]byte(s)) }
func (w *ckWriter) int64s(v []int64) {
	for _, x := range v {
		w.u64(uint64(x))
	}
}

// ErrCheckpoint is wrapped by every error about a checkpoint that cannot
// be used (another search's, or not a whole checkpoint file).
var ErrCheckpoint = errors.New("checkpoint")

// ckErr is a one-line error about the checkpoint at path.
func ckErr(path, format string, args ...any) error {
	return fmt.Errorf("%w %s: %s", ErrCheckpoint, path, fmt.Sprintf(format, args...))
}

// ckReader reads what ckWriter wrote, from a file of known size: a length
// past what is left is an error, never an allocation.
type ckReader struct {
	r    *bufio.Reader
	crc  hash.Hash32
	body bool
	left int64
	err  error
	b    [8]byte
}

// uvar reads what ckWriter.uvar wrote.
func (r *ckReader) uvar() uint64 {
	var v uint64
	for shift := uint(0); shift < 64; shift += 7 {
		c := r.u8()
		if r.err != nil {
			return 0
		}
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v
		}
	}
	r.err = errors.New("a number runs on")
	return 0
}

var errShort = errors.New("the file ends early")

func (r *ckReader) raw(p []byte) {
	if r.err != nil {
		return
	}
	if int64(len(p)) > r.left {
		r.err = errShort
		return
	}
	if _, err := io.ReadFull(r.r, p); err != nil {
		r.err = errShort
		return
	}
	r.left -= int64(len(p))
	if r.body {
		r.crc.Write(p)
	}
}

func (r *ckReader) u8() uint8 { r.raw(r.b[:1]); return r.b[0] }
func (r *ckReader) bool() bool {
	v := r.u8()
	if v > 1 && r.err == nil {
		r.err = errors.New("a flag is neither 0 nor 1")
	}
	return v == 1
}
func (r *ckReader) u32() uint32 {
	r.raw(r.b[:4])
	if r.err != nil {
		return 0
	}
	return binary.LittleEndian.Uint32(r.b[:4])
}
func (r *ckReader) u64() uint64 {
	r.raw(r.b[:])
	if r.err != nil {
		return 0
	}
	return binary.LittleEndian.Uint64(r.b[:])
}

// count reads a number of items of size bytes each that must fit in what
// is left of the file (and in max).
func (r *ckReader) count(size int64, max uint64) int {
	n := r.u64()
	if r.err != nil {
		return 0
	}
	if n > max || (size > 0 && n > uint64(r.left/size)) {
		r.err = fmt.Errorf("a count of %d is more than the file holds", n)
		return 0
	}
	return int(n)
}

func (r *ckReader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if int64(n) > r.left {
		r.err = errShort
		return nil
	}
	p := make([]byte, n)
	r.raw(p)
	return p
}

func (r *ckReader) str() string { return string(r.bytes(r.count(1, 1<<16))) }

// readCheckpointHeader reads the file's magic, version and header.
func readCheckpointHeader(r *ckReader) (checkpointHeader, error) {
	var hd checkpointHeader
	magic := make([]byte, len(checkpointMagic))
	r.raw(magic)
	if r.err != nil || string(magic) != string(checkpointMagic) {
		return hd, errors.New("not a lockcheck checkpoint (no LOCKCKPT at its start)")
	}
	if v := r.u32(); r.err == nil && v != checkpointVersion {
		return hd, fmt.Errorf("format version %d; this program reads version %d", v, checkpointVersion)
	}
	n := r.u32()
	if r.err == nil && int64(n) > min(r.left, 1<<20) {
		return hd, errors.New("its header's length is past the file's end")
	}
	p := r.bytes(int(n))
	sum := r.u32()
	if r.err != nil {
		return hd, fmt.Errorf("its header: %v", r.err)
	}
	if crc32.Checksum(p, crcTable) != sum {
		return hd, errors.New("its header is corrupt (CRC mismatch)")
	}
	if err := json.Unmarshal(p, &hd); err != nil {
		return hd, fmt.Errorf("its header is not valid JSON: %v", err)
	}
	return hd, nil
}

// resume loads the checkpoint in dir into e (a new engine, before run):
// it reports depth and proved. The header must match e's search.
func (e *engine) resume(dir string) (depth, proved int, err error) {
	path := filepath.Join(dir, CheckpointFile)
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, 0, ckErr(dir, "no checkpoint (%s) in the folder", CheckpointFile)
		}
		return 0, 0, ckErr(path, "%v", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, 0, ckErr(path, "%v", err)
	}
	return e.decodeFrom(path, f, fi.Size())
}

// decodeFrom reads a checkpoint of size bytes from src.
func (e *engine) decodeFrom(path string, src io.Reader, size int64) (depth, proved int, err error) {
	r := &ckReader{r: bufio.NewReaderSize(src, 1<<20), crc: crc32.New(crcTable), left: size}
	hd, err := readCheckpointHeader(r)
	if err != nil {
		return 0, 0, ckErr(path, "%v", err)
	}
	want := e.header(hd.Depth)
	switch {
	case hd.Design != want.Design:
		return 0, 0, ckErr(path, "it is of design %s, not %s", hd.Design, want.Design)
	case strings.Join(hd.Properties, ",") != strings.Join(want.Properties, ","):
		return 0, 0, ckErr(path, "it checks properties %s, not %s", strings.Join(hd.Properties, ","), strings.Join(want.Properties, ","))
	case hd.Bounds != want.Bounds:
		return 0, 0, ckErr(path, "its bounds are %s, not %s", hd.Bounds, want.Bounds)
	case hd.Packing != want.Packing || hd.Model != want.Model:
		return 0, 0, ckErr(path, "it was written by another version of the program (model packing %s, steps %s; this one: %s, %s)", hd.Packing, hd.Model, want.Packing, want.Model)
	}
	r.body = true
	depth, proved, err = e.decode(r)
	if err == nil && r.err != nil {
		err = r.err
	}
	if err != nil {
		return 0, 0, ckErr(path, "corrupt: %v", err)
	}
	r.body = false
	sum := r.u32()
	end := make([]byte, len(checkpointEnd))
	r.raw(end)
	if r.err != nil || string(end) != string(checkpointEnd) {
		return 0, 0, ckErr(path, "corrupt: the file does not end as a checkpoint does (cut short?)")
	}
	if sum != r.crc.Sum32() {
		return 0, 0, ckErr(path, "corrupt: CRC mismatch")
	}
	if r.left != 0 {
		return 0, 0, ckErr(path, "corrupt: %d bytes after its end", r.left)
	}
	if depth != hd.Depth || int64(e.trail.n) != hd.States {
		return 0, 0, ckErr(path, "corrupt: its header says depth %d and %d states, its body %d and %d", hd.Depth, hd.States, depth, e.trail.n)
	}
	return depth, proved, nil
}

// decode reads the body into e, checking every count against what the
// engine can hold.
func (e *engine) decode(r *ckReader) (depth, proved int, err error) {
	depth = int(r.u64())
	proved = int(r.u64())
	base := r.u64()
	trans := r.u64()
	peak := r.u64()
	secs := math.Float64frombits(r.u64())
	if r.err != nil {
		return 0, 0, r.err
	}
	if depth > maxIDs || proved > depth+1 || base > maxIDs || trans > 1<<62 || peak > 1<<62 || !(secs >= 0 && secs < 1e12) {
		return 0, 0, errors.New("its numbers are out of range")
	}
	e.base, e.rep.Stats.Transitions, e.peak, e.prevSeconds = uint32(base), int64(trans), int64(peak), secs
	if n := r.count(0, 1<<16); r.err != nil || n != len(e.props) {
		return 0, 0, fmt.Errorf("%d properties, want %d", n, len(e.props))
	}
	for i := range e.props {
		res := &e.rep.Results[i]
		e.done[i] = r.bool()
		res.Status = Status(r.str())
		hasTrace := r.bool()
		n := r.count(3, maxIDs)
		if r.err != nil {
			return 0, 0, r.err
		}
		if hasTrace {
			res.Trace = make([]model.Action, n)
			for k := range res.Trace {
				var b [3]byte
				r.raw(b[:])
				res.Trace[k] = model.Action{Kind: model.ActionKind(b[0]), Client: b[1], Arg: b[2]}
			}
		} else if n != 0 {
			return 0, 0, errors.New("a trace without its flag")
		}
		if e.done[i] != (res.Status == Violated || res.Status == Seen) || e.done[i] != hasTrace {
			return 0, 0, fmt.Errorf("property %s: status %q and its trace disagree", e.props[i].Name, res.Status)
		}
	}
	e.cov.Kinds = r.u64()
	e.cov.AddWitnesses(r.u8())
	for k := range e.counts.Steps {
		for p := range e.counts.Steps[k] {
			e.counts.Steps[k][p] = int64(r.u64())
		}
	}
	for p := range e.counts.Phases {
		e.counts.Phases[p] = int64(r.u64())
	}
	// the trail
	t := e.trail
	n, sealed, total := r.u64(), r.u64(), r.u64()
	chunks := r.count(0, math.MaxInt32)
	if r.err != nil {
		return 0, 0, r.err
	}
	if n == 0 || n > maxIDs || sealed > n || total >= n || uint64(chunks) != (n+trailChunk-1)/trailChunk || uint64(e.base) > n {
		return 0, 0, errors.New("its trail's numbers disagree")
	}
	t.act, t.kids = make([][]uint8, chunks), make([][]uint8, chunks)
	for k := range chunks {
		m := min(trailChunk, int(n)-k*trailChunk)
		if int64(2*m) > r.left {
			return 0, 0, errShort
		}
		t.act[k], t.kids[k] = make([]uint8, trailChunk), make([]uint8, trailChunk)
		r.raw(t.act[k][:m])
		r.raw(t.kids[k][:m])
	}
	t.n, t.sealed, t.total = int(n), int(sealed), uint32(total)
	ncp := r.count(4, maxIDs)
	capCP := r.u64()
	if r.err != nil {
		return 0, 0, r.err
	}
	if capCP < uint64(ncp) || capCP > 2*uint64(ncp)+64 || ncp != (int(sealed)+cpEvery-1)/cpEvery {
		return 0, 0, errors.New("its trail's checkpoints disagree")
	}
	t.cp = make([]uint32, ncp, capCP)
	r.raw(u32Bytes(t.cp))
	t.wide = map[uint32]uint16{}
	for range r.count(16, maxIDs) {
		k, v := r.u64(), r.u64()
		if k >= n || v > math.MaxUint16 {
			return 0, 0, errors.New("its trail's wide entries are out of range")
		}
		t.wide[uint32(k)] = uint16(v)
	}
	t.wideK = map[uint32]uint32{}
	for range r.count(16, maxIDs) {
		k, v := r.u64(), r.u64()
		if k >= n || v > maxIDs {
			return 0, 0, errors.New("its trail's wide entries are out of range")
		}
		t.wideK[uint32(k)] = uint32(v)
	}
	// the visited set
	kind := r.u8()
	if r.err != nil {
		return 0, 0, r.err
	}
	if (kind == 1) != (e.bits != nil) || (kind == 2) != (e.cset != nil) || kind > 2 {
		return 0, 0, errors.New("its visited set is of another kind")
	}
	if e.bits != nil {
		b := e.bits
		if nw := r.count(8, math.MaxInt64); r.err != nil || nw != len(b.words) {
			return 0, 0, errors.New("its bit array has another size")
		}
		r.raw(u64Bytes(b.words))
		r.raw(u64Bytes(b.set))
		b.fill, b.missed = math.Float64frombits(r.u64()), math.Float64frombits(r.u64())
		b.stored = int64(r.u64())
	} else if e.cset != nil {
		if err := e.cset.decode(r); err != nil {
			return 0, 0, err
		}
	} else {
		if err := e.set.decode(r); err != nil {
			return 0, 0, err
		}
	}
	// the frontier
	stride, nf := r.u64(), r.u64()
	if r.err != nil {
		return 0, 0, r.err
	}
	if stride != uint64(e.stride) || nf > n-uint64(e.base) {
		return 0, 0, errors.New("its frontier does not fit the design's states")
	}
	if nf*stride > uint64(r.left) {
		return 0, 0, errShort
	}
	e.cur.grow(int(nf), &e.pool)
	for i := 0; i < int(nf) && r.err == nil; i += blockStates() {
		m := min(blockStates(), int(nf)-i)
		b := e.cur.blocks[i>>blockBits]
		r.raw(b[:m*e.stride])
	}
	if r.err != nil {
		return 0, 0, r.err
	}
	if e.base+uint32(nf) != uint32(n) {
		return 0, 0, errors.New("its frontier is not the last states numbered")
	}
	return depth, proved, e.cur.flush(true, &e.pool)
}

// checkpointPacking is the packing digest in the header of dir's
// checkpoint, "" if it cannot be read (resume then says why).
func checkpointPacking(dir string) string {
	f, err := os.Open(filepath.Join(dir, CheckpointFile))
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	hd, err := readCheckpointHeader(&ckReader{r: bufio.NewReader(f), crc: crc32.New(crcTable), left: fi.Size()})
	if err != nil {
		return ""
	}
	return hd.Packing
}

// ReadCheckpoint reads and verifies the checkpoint in dir (its header and
// the CRC of its body) without loading it: what search it is of, its
// depth and states. The error, if any, is one line wrapping ErrCheckpoint.
func ReadCheckpoint(dir string) (design string, info CheckpointInfo, err error) {
	path := filepath.Join(dir, CheckpointFile)
	f, err := os.Open(path)
	if err != nil {
		return "", info, ckErr(path, "%v", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", info, ckErr(path, "%v", err)
	}
	r := &ckReader{r: bufio.NewReaderSize(f, 1<<20), crc: crc32.New(crcTable), left: fi.Size()}
	hd, err := readCheckpointHeader(r)
	if err != nil {
		return "", info, ckErr(path, "%v", err)
	}
	body := r.left - 4 - int64(len(checkpointEnd))
	if body < 0 {
		return "", info, ckErr(path, "corrupt: the file ends early")
	}
	r.body = true
	if _, err := io.CopyN(r.crc, r.r, body); err != nil {
		return "", info, ckErr(path, "corrupt: %v", errShort)
	}
	r.left -= body
	r.body = false
	sum := r.u32()
	end := make([]byte, len(checkpointEnd))
	r.raw(end)
	if r.err != nil || string(end) != string(checkpointEnd) || sum != r.crc.Sum32() {
		return "", info, ckErr(path, "corrupt: CRC mismatch or cut short")
	}
	return hd.Design, CheckpointInfo{Path: path, Depth: hd.Depth, States: hd.States, Bytes: fi.Size()}, nil
}

// encode writes the set: each segment's sizes and its entries in order
// (the slots follow from them: an ordered table's layout is that of its
// sorted entries, each at the first free slot from its home on).
func (set *fpSet) encode(w *ckWriter) {
	var entries []uint64
	for g := range set.segs {
		s := &set.segs[g]
		w.uvar(s.n)
		w.uvar(uint64(s.count))
		w.uvar(uint64(len(s.slots)))
		w.uvar(uint64(cap(s.slots)))
		entries = entries[:0]
		for _, v := range s.slots {
			if v != 0 {
				entries = append(entries, v)
			}
		}
		w.raw(u64Bytes(entries))
	}
}

// decode reads what encode wrote, checking that every segment is a
// well-formed table.
func (set *fpSet) decode(r *ckReader) error {
	var entries []uint64
	for g := range set.segs {
		s := &set.segs[g]
		hn, count, ln, cp := r.uvar(), r.uvar(), r.uvar(), r.uvar()
		if r.err != nil {
			return r.err
		}
		if ln == 1 && count == 0 && hn == 1 {
			*s = fpSegment{slots: emptySeg[:], n: 1}
			continue
		}
		// a segment grows by 5/4 when it is 9/10 full, and its tail past
		// the home slots doubles when a cluster reaches its end: its sizes
		// are linear in its entries (which the file must hold), so that a
		// damaged file cannot make the reader allocate more than it holds
		if count > uint64(r.left/8) || hn == 0 || hn > 2*count+64 || ln <= hn || ln > hn+2*count+64 || count >= ln || cp < ln || cp > 2*ln+1024 {
			return fmt.Errorf("segment %d's sizes disagree", g)
		}
		entries = slices.Grow(entries[:0], int(count))[:count]
		r.raw(u64Bytes(entries))
		if r.err != nil {
			return r.err
		}
		slots := make([]uint64, ln, cp)
		next := uint64(0)
		for k, v := range entries {
			if v == 0 || segOf(v) != g || (k > 0 && v <= entries[k-1]) {
				return fmt.Errorf("segment %d's entries are not its own in order", g)
			}
			i := max(home(v, hn), next)
			if i >= ln-1 {
				return fmt.Errorf("segment %d's entries run past its slots", g)
			}
			slots[i] = v
			next = i + 1
		}
		*s = fpSegment{slots: slots, n: hn, count: int(count)}
	}
	return nil
}

// encode writes the compact set: each segment's sizes and its entries in order
// (the slots follow from them: an ordered table's layout is that of its
// sorted entries, each at the first free slot from its home on).
func (set *cpSet) encode(w *ckWriter) {
	var entries []uint64
	for gi := range set.segs {
		s := &set.segs[gi]
		w.uvar(s.n)
		w.uvar(s.size)
		w.uvar(uint64(s.count))
		entries = entries[:0]
		s.each(func(f uint64) bool {
			entries = append(entries, uint64(gi)<<lowBits|f)
			return true
		})
		w.raw(u64Bytes(entries))
	}
}

// decode reads what encode wrote, checking that every segment is a
// well-formed table.
func (set *cpSet) decode(r *ckReader) error {
	var entries []uint64
	for g := range set.segs {
		s := &set.segs[g]
		hn, size, count := r.uvar(), r.uvar(), r.uvar()
		if r.err != nil {
			return r.err
		}
		if hn == 0 && size == 0 && count == 0 {
			*s = cpSegment{}
			continue
		}
		// a segment grows by 5/4 when it is 19/20 full (cpSet), and its tail past
		// the home slots doubles when a cluster reaches its end: its sizes
		// are linear in its entries (which the file must hold), so that a
		// damaged file cannot make the reader allocate more than it holds
		if count > uint64(r.left/8) || hn == 0 || hn > 2*count+64 || size <= hn || size%64 != 0 || size > 2*hn+4*count+256 {
			return fmt.Errorf("segment %d's sizes disagree", g)
		}
		entries = slices.Grow(entries[:0], int(count))[:count]
		r.raw(u64Bytes(entries))
		if r.err != nil {
			return r.err
		}
		out := newCPSegment(hn, size)
		b := cpBuilder{g: &out}
		for k, v := range entries {
			if v == 0 || segOf(v) != g || (k > 0 && v <= entries[k-1]) {
				return fmt.Errorf("segment %d's entries are not its own in order", g)
			}
			if !b.add(v & lowMask) {
				return fmt.Errorf("segment %d's entries run past its slots", g)
			}
		}
		b.finish()
		*s = out
	}
	return nil
}
