package explore

// chunkStates is how many frontier states one chunk of a level expands: a
// level is expanded, merged and collected chunk by chunk, in frontier
// order, so that the merge's per-step arrays stay the size of one chunk's
// steps, and the blocks of the level being expanded go back to the pool,
// for the next level, as soon as their chunk is done. Merging chunk by
// chunk in order gives the same first-reaching steps, so the same states,
// ids and parents, as merging the whole level at once.
//
// A frontier is kept in blocks of 1<<blockBits states (the pool's
// granularity; a chunk is a whole number of blocks). Variables so that a
// test can make them small.
var (
	chunkStates = 1 << 18
	blockBits   = 14
)

// frontier is one level's states, packed (stride bytes each), in blocks of
// blockStates.
type frontier struct {
	blocks [][]byte
	n      int // states
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
	return make([]byte, n*p.stride)
}

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

// grow makes room for n more states, taking blocks from the pool (a small
// last block is replaced by a bigger one).
func (f *frontier) grow(n int, p *blockPool) {
	f.n += n
	bs := blockStates()
	for {
		k := len(f.blocks)
		have := k * bs
		if k > 0 {
			have = (k-1)*bs + len(f.blocks[k-1])/p.stride
		}
		if have >= f.n {
			return
		}
		if k > 0 && len(f.blocks[k-1]) < bs*p.stride {
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

// reset empties the frontier, giving its remaining blocks back.
func (f *frontier) reset(p *blockPool) {
	for k, b := range f.blocks {
		p.put(b)
		f.blocks[k] = nil
	}
	f.blocks = f.blocks[:0]
	f.n = 0
}
