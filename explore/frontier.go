package explore

import (
	"fmt"
	"os"
)

// chunkStates is how many frontier states one chunk of a level expands: a
// level is expanded, merged and collected chunk by chunk, in frontier
// order, so that the merge's per-step arrays stay the size of one chunk's
// steps, and the blocks of the level being expanded go back to the pool,
// for the next level, as soon as their chunk is done. Merging chunk by
// chunk in order gives the same first-reaching steps, so the same states,
// ids and parents, as merging the whole level at once. The units keep the
// chunk's successors packed until the collect phase copies the new ones
// out, with room for one a step (about 150 bytes a frontier state on the
// SPIN design), so the chunk's size trades memory for the merge's
// locality: on the SPIN design without symmetry (CPU seconds, one worker,
// benchstat n=3) 2^14 states cost 7.05, 2^16 6.42, 2^17 6.29, 2^18 6.24,
// and search memory 144, 164, 189 and 235 MiB. Under a memory bound a
// chunk is one block (engine.chunkStates).
//
// A frontier is kept in blocks of 1<<blockBits states (the pool's
// granularity; a chunk is a whole number of blocks). Variables so that a
// test can make them small.
var (
	chunkStates = 1 << 16
	blockBits   = 14
)

// frontier is one level's states, packed (stride bytes each), in blocks of
// blockStates.
type frontier struct {
	blocks [][]byte
	n      int      // states
	file   *os.File // the blocks on disk (Bounds.FrontierDir); nil: in memory
}

func blockStates() int { return 1 << blockBits }

// blockPool keeps the blocks of finished chunks for the next level.
type blockPool struct {
	stride int
	free   [][]byte
	total  int64 // bytes of the blocks allocated and not dropped
}

// get returns a block for at least states states (at most blockStates):
// a full one from the pool, or a smaller new one for a small level.
func (p *blockPool) get(states int) []byte {
	if k := len(p.free); k > 0 {
		b := p.free[k-1]
		p.free = p.free[:k-1]
		return b
	}
	n := min(minBlock, blockStates())
	for n < states && n < blockStates() {
		n *= 2
	}
	p.total += int64(n * p.stride)
	return make([]byte, n*p.stride, n*p.stride+packRoom)
}

// packRoom is the room past a packed state that lets model.Packing's
// Pack and Unpack move its pieces in place (8 bytes): the frontier's
// blocks and the units' buffers have it past their last state.
const packRoom = 8

// minBlock is the smallest block, in states.
const minBlock = 1 << 8

// put keeps a full block for reuse; a smaller one is dropped.
func (p *blockPool) put(b []byte) {
	if b == nil {
		return
	}
	if len(b) == blockStates()*p.stride {
		p.free = append(p.free, b)
		return
	}
	p.total -= int64(len(b))
}

// bytes is what the pool's blocks take, in use or free.
func (p *blockPool) bytes() int64 { return p.total }

// state is the packed bytes of state i.
func (f *frontier) state(i, stride int) []byte {
	b := f.blocks[i>>blockBits]
	k := (i & (1<<blockBits - 1)) * stride
	return b[k : k+stride]
}

// roomy is the packed bytes of state i and the packRoom bytes after them
// (the next state's, or the block's room), for Unpack.
func (f *frontier) roomy(i, stride int) []byte {
	return f.state(i, stride)[:stride+packRoom]
}

// grow makes room for n more states, taking blocks from the pool (a small
// last block is replaced by a bigger one).
func (f *frontier) grow(n int, p *blockPool) {
	f.n += n
	bs := blockStates()
	for {
		k := len(f.blocks)
		have := k * bs // a nil block is on disk, and full
		small := k > 0 && f.blocks[k-1] != nil && len(f.blocks[k-1]) < bs*p.stride
		if small {
			have = (k-1)*bs + len(f.blocks[k-1])/p.stride
		}
		if have >= f.n {
			return
		}
		if small {
			// a small block: move it into a bigger one
			old := f.blocks[k-1]
			b := p.get(f.n - (k-1)*bs)
			copy(b, old)
			p.put(old)
			f.blocks[k-1] = b
			continue
		}
		f.blocks = append(f.blocks, p.get(f.n-k*bs))
	}
}

// release gives the blocks of states lo to hi-1 back to the pool (a
// block that holds states after hi-1 is kept); the frontier must not read
// them again.
func (f *frontier) release(lo, hi int, p *blockPool) {
	last := hi >> blockBits // first block not wholly released
	if hi == f.n {
		last = len(f.blocks)
	}
	for k := lo >> blockBits; k < last; k++ {
		p.put(f.blocks[k])
		f.blocks[k] = nil
	}
}

// reset empties the frontier, giving its remaining blocks back (and
// emptying its file).
func (f *frontier) reset(p *blockPool) error {
	for k, b := range f.blocks {
		p.put(b)
		f.blocks[k] = nil
	}
	f.blocks = f.blocks[:0]
	f.n = 0
	if f.file != nil {
		if err := f.file.Truncate(0); err != nil {
			return fmt.Errorf("explore: frontier file: %w", err)
		}
	}
	return nil
}

// A frontier on disk (Bounds.FrontierDir): its blocks are written to a
// file as soon as they are full and read back one chunk at a time, so that
// only a chunk of each frontier is in memory. A nil block is on disk.

// spillTo gives the frontier a file in dir (empty, deleted when closed).
func (f *frontier) spillTo(dir string) error {
	file, err := os.CreateTemp(dir, "lockcheck-frontier-*")
	if err != nil {
		return fmt.Errorf("explore: frontier file: %w", err)
	}
	// unlinked at once: the space goes back when the file is closed, even
	// if the process is killed
	if err := os.Remove(file.Name()); err != nil {
		file.Close()
		return fmt.Errorf("explore: frontier file: %w", err)
	}
	f.file = file
	return nil
}

// flush writes the frontier's full blocks (all of them if all) to its
// file and gives them back to the pool. No-op for a frontier in memory.
func (f *frontier) flush(all bool, p *blockPool) error {
	if f.file == nil {
		return nil
	}
	bs := blockStates()
	for k, b := range f.blocks {
		if b == nil {
			continue
		}
		n := min(bs, f.n-k*bs) // states in block k
		if n < bs && !all {
			break
		}
		if _, err := f.file.WriteAt(b[:n*p.stride], int64(k)*int64(bs*p.stride)); err != nil {
			return fmt.Errorf("explore: frontier file: %w", err)
		}
		p.put(b)
		f.blocks[k] = nil
	}
	return nil
}

// load reads the blocks of states lo to hi-1 back from the file.
func (f *frontier) load(lo, hi int, p *blockPool) error {
	if f.file == nil {
		return nil
	}
	bs := blockStates()
	for k := lo >> blockBits; k*bs < hi; k++ {
		if f.blocks[k] != nil {
			continue
		}
		n := min(bs, f.n-k*bs)
		b := p.get(bs)
		if _, err := f.file.ReadAt(b[:n*p.stride], int64(k)*int64(bs*p.stride)); err != nil {
			return fmt.Errorf("explore: frontier file: %w", err)
		}
		f.blocks[k] = b
	}
	return nil
}

// close deletes the frontier's file.
func (f *frontier) close() {
	if f.file != nil {
		f.file.Close()
		f.file = nil
	}
}
