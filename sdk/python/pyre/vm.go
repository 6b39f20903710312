package pyre

import (
	"regexp/syntax"
	"sync"
	"unicode/utf8"
)

// A metered matcher. Go's regexp runs in time linear in the subject, but
// the factor is the size of the compiled program (up to thousands of
// instructions for counted repetition), and re.findall / re.sub / re.split
// search again after every match, each search able to scan to the end of
// the subject: findall('a*b|a', 'a'*40_000) takes about 30 s in Go's
// regexp. None of that can be interrupted. vm is a Pike VM (a breadth-first
// simulation of the program, one thread per instruction, no backtracking)
// over the same syntax.Prog that regexp.Compile builds, with the same
// leftmost-first semantics and submatches, that counts its work and reports
// it to a Meter, so the sandbox charges it to the program's step budget and
// stops a runaway match when the budget ends.

// Meter receives the matcher's work in steps: one step is one thread (one
// program instruction) handled at one position of the subject. It is
// called at least every MeterEvery steps during a match and once at its
// end. To stop a match it panics (the sandbox stops its thread that way);
// the matcher holds no state outside its stack, so unwinding is safe.
type Meter func(steps uint64)

// MeterEvery is the largest number of steps a match does between two calls
// of its Meter (4,096 steps: tens of µs).
const MeterEvery = 4096

// vm is one compiled program; safe for concurrent use (each find has its
// own queues).
type vm struct {
	prog *syntax.Prog
	// anchored: the program starts with \A, so only position 0 starts a
	// thread.
	anchored bool
	// pool holds the queues and capture slices of finished finds, so that
	// findall over many matches does not allocate per match.
	pool sync.Pool // *machine
}

// machine is the reusable memory of one find.
type machine struct {
	runq, nextq *queue
	free        [][]int
	start       []int
}

func newVM(expr string) (*vm, error) {
	re, err := syntax.Parse(expr, syntax.Perl) // regexp.Compile's flags
	if err != nil {
		return nil, err
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return nil, err
	}
	return &vm{prog: prog, anchored: prog.StartCond()&syntax.EmptyBeginText != 0}, nil
}

// thread is a program counter's capture registers.
type thread struct {
	pc  uint32
	cap []int
}

// queue is a sparse set of threads in priority order.
type queue struct {
	sparse []uint32
	dense  []thread
}

func newQueue(n int) *queue { return &queue{sparse: make([]uint32, n), dense: make([]thread, 0, n)} }

func (q *queue) has(pc uint32) bool {
	j := q.sparse[pc]
	return int(j) < len(q.dense) && q.dense[j].pc == pc
}

// run is the state of one find.
type run struct {
	v        *vm
	ncap     int
	meter    Meter
	steps    uint64 // not yet reported
	matched  bool
	matchcap []int
	free     [][]int
}

func (m *run) tick() {
	m.steps++
	if m.steps >= MeterEvery {
		n := m.steps
		m.steps = 0
		m.meter(n)
	}
}

func (m *run) alloc(src []int) []int {
	var c []int
	if n := len(m.free); n > 0 {
		c = m.free[n-1]
		m.free = m.free[:n-1]
	} else {
		c = make([]int, m.ncap)
	}
	copy(c, src)
	return c
}

// add follows the empty transitions from pc at position pos (context
// cond) and queues the threads that consume a rune or match, in priority
// order (Alt's Out before Arg), as regexp's NFA does.
func (m *run) add(q *queue, pc uint32, pos int, cap []int, cond syntax.EmptyOp) {
	if pc == 0 || q.has(pc) {
		return
	}
	m.tick()
	j := len(q.dense)
	q.dense = append(q.dense, thread{pc: pc})
	q.sparse[pc] = uint32(j)
	i := &m.v.prog.Inst[pc]
	switch i.Op {
	case syntax.InstFail:
	case syntax.InstAlt, syntax.InstAltMatch:
		m.add(q, i.Out, pos, cap, cond)
		m.add(q, i.Arg, pos, cap, cond)
	case syntax.InstEmptyWidth:
		if syntax.EmptyOp(i.Arg)&^cond == 0 {
			m.add(q, i.Out, pos, cap, cond)
		}
	case syntax.InstNop:
		m.add(q, i.Out, pos, cap, cond)
	case syntax.InstCapture:
		if int(i.Arg) < len(cap) {
			old := cap[i.Arg]
			cap[i.Arg] = pos
			m.add(q, i.Out, pos, cap, cond)
			cap[i.Arg] = old
		} else {
			m.add(q, i.Out, pos, cap, cond)
		}
	case syntax.InstMatch, syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
		q.dense[j].cap = m.alloc(cap)
	}
}

// step advances every thread of runq over rune c (at pos, the next
// position being next with context nextCond) into nextq; a Match cuts the
// lower-priority threads (leftmost-first).
func (m *run) step(runq, nextq *queue, pos, next int, c rune, nextCond syntax.EmptyOp) {
	for j := 0; j < len(runq.dense); j++ {
		t := &runq.dense[j]
		if t.cap == nil {
			continue
		}
		m.tick()
		i := &m.v.prog.Inst[t.pc]
		ok := false
		switch i.Op {
		case syntax.InstMatch:
			t.cap[1] = pos
			copy(m.matchcap, t.cap)
			m.matched = true
			for _, d := range runq.dense[j:] {
				if d.cap != nil {
					m.free = append(m.free, d.cap)
				}
			}
			runq.dense = runq.dense[:0]
			return
		case syntax.InstRune:
			ok = i.MatchRune(c)
		case syntax.InstRune1:
			ok = c == i.Rune[0]
		case syntax.InstRuneAny:
			ok = c >= 0
		case syntax.InstRuneAnyNotNL:
			ok = c >= 0 && c != '\n'
		}
		if ok {
			m.add(nextq, i.Out, next, t.cap, nextCond)
		}
		m.free = append(m.free, t.cap)
		t.cap = nil
	}
	runq.dense = runq.dense[:0]
}

// at is the rune at byte offset pos of s and its width (-1, 0 at the end),
// decoded as regexp does (invalid UTF-8 is RuneError, width 1).
func at(s string, pos int) (rune, int) {
	if pos >= len(s) {
		return -1, 0
	}
	if c := s[pos]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[pos:])
}

// find is regexp.FindStringSubmatchIndex over v's program: the byte
// offsets of the leftmost-first match and its groups, nil when there is
// none. Its work goes to meter (never nil here).
func (v *vm) find(s string, meter Meter) []int {
	n := len(v.prog.Inst)
	mc, _ := v.pool.Get().(*machine)
	if mc == nil {
		mc = &machine{runq: newQueue(n), nextq: newQueue(n), start: make([]int, v.prog.NumCap)}
	}
	m := &run{v: v, ncap: v.prog.NumCap, meter: meter, matchcap: make([]int, v.prog.NumCap), free: mc.free}
	for i := range m.matchcap {
		m.matchcap[i] = -1
	}
	runq, nextq := mc.runq, mc.nextq
	defer func() {
		// Emptied first: a Meter that panicked left the queues half full.
		for _, q := range []*queue{runq, nextq} {
			for _, t := range q.dense {
				if t.cap != nil {
					m.free = append(m.free, t.cap)
				}
			}
			q.dense = q.dense[:0]
		}
		mc.free = m.free
		v.pool.Put(mc)
	}()
	pos := 0
	r, w := at(s, 0)
	r1, w1 := at(s, w)
	cond := syntax.EmptyOpContext(-1, r)
	start := mc.start
	for i := range start {
		start[i] = -1
	}
	for {
		if len(runq.dense) == 0 && (m.matched || (v.anchored && pos != 0)) {
			break
		}
		if !m.matched && (pos == 0 || !v.anchored) {
			if m.ncap > 0 {
				start[0] = pos
			}
			m.add(runq, uint32(v.prog.Start), pos, start, cond)
		}
		nextCond := syntax.EmptyOpContext(r, r1)
		m.step(runq, nextq, pos, pos+w, r, nextCond)
		if w == 0 {
			break
		}
		pos += w
		r, w = r1, w1
		if r >= 0 {
			r1, w1 = at(s, pos+w)
		}
		cond = nextCond
		runq, nextq = nextq, runq
	}
	if m.steps > 0 {
		meter(m.steps)
	}
	if !m.matched {
		return nil
	}
	return m.matchcap
}
