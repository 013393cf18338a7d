package explore

// levelStates is how many states one block of a frontier holds, and how
// many frontier states one chunk of a level expands: a level is expanded,
// merged and collected chunk by chunk, in frontier order, so that the
// merge's per-step arrays stay the size of one chunk's steps and a block
// of the level being expanded goes back to the pool, for the next level,
// as soon as its chunk is done. Merging chunk by chunk in order gives the
// same first-reaching steps, so the same states, ids and parents, as
// merging the whole level at once. Variables so that a test can make
// chunks small.
var (
	levelBlockBits = 18
	levelStates    = 1 << levelBlockBits
)

// frontier is one level's states, packed (stride bytes each), in blocks of
// levelStates.
type frontier struct {
	blocks [][]byte
	n      int // states
}

// blockPool keeps the blocks of finished chunks for the next level.
type blockPool struct {
	stride int
	free   [][]byte
	total  int64 // bytes of the blocks allocated and not dropped
}

// get returns a block for at least states states (at most levelStates):
// a full one from the pool, or a smaller new one for a small level.
func (p *blockPool) get(states int) []byte {
	if k := len(p.free); k > 0 {
		b := p.free[k-1]
		p.free = p.free[:k-1]
		return b
	}
	n := min(minBlock, levelStates)
	for n < states && n < levelStates {
		n *= 2
	}
	p.total += int64(n * p.stride)
	return make([]byte, n*p.stride)
}

// minBlock is the smallest block, in states.
const minBlock = 1 << 10

// put keeps a full block for reuse; a smaller one is dropped.
func (p *blockPool) put(b []byte) {
	if b == nil {
		return
	}
	if len(b) == levelStates*p.stride {
		p.free = append(p.free, b)
		return
	}
	p.total -= int64(len(b))
}

// bytes is what the pool's blocks take, in use or free.
func (p *blockPool) bytes() int64 { return p.total }

// state is the packed bytes of state i.
func (f *frontier) state(i, stride int) []byte {
	b := f.blocks[i>>levelBlockBits]
	k := (i & (levelStates - 1)) * stride
	return b[k : k+stride]
}

// grow makes room for n more states, taking blocks from the pool (a small
// last block is replaced by a bigger one).
func (f *frontier) grow(n int, p *blockPool) {
	f.n += n
	for {
		k := len(f.blocks)
		have := k * levelStates
		if k > 0 {
			have = (k-1)*levelStates + len(f.blocks[k-1])/p.stride
		}
		if have >= f.n {
			return
		}
		if k > 0 && len(f.blocks[k-1]) < levelStates*p.stride {
			// a small block: move it into a bigger one
			old := f.blocks[k-1]
			b := p.get(f.n - (k-1)*levelStates)
			copy(b, old)
			p.put(old)
			f.blocks[k-1] = b
			continue
		}
		f.blocks = append(f.blocks, p.get(f.n-k*levelStates))
	}
}

// release gives block k back to the pool; the frontier must not read it
// again.
func (f *frontier) release(k int, p *blockPool) {
	p.put(f.blocks[k])
	f.blocks[k] = nil
}

// reset empties the frontier, giving its remaining blocks back.
func (f *frontier) reset(p *blockPool) {
	for k := range f.blocks {
		f.release(k, p)
	}
	f.blocks = f.blocks[:0]
	f.n = 0
}
