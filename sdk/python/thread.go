package python

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
)

// Thread runs one program. It is not safe for concurrent use, except
// Cancel, which any goroutine may call.
type Thread struct {
	// MaxSteps bounds Steps; MaxMem bounds Mem (bytes charged). Zero: no
	// bound.
	MaxSteps, MaxMem uint64
	// Steps counts work: one per statement, call and loop iteration, plus
	// each builtin's cost rule. Mem counts bytes charged (cumulative).
	Steps, Mem uint64
	// Budget makes the error for an exhausted budget (kind is "steps" or
	// "memory"); nil: a plain error.
	Budget func(kind, what string, need, used, limit uint64) error
	// Check runs every CheckEvery steps (deadlines, cancellation); a
	// non-nil error stops the program (uncatchable).
	Check      func() error
	CheckEvery uint64
	// Print writes the text of print() (its newline included); nil
	// discards it. A non-nil error stops the program.
	Print func(t *Thread, s string) error
	// PrintHook, when set, sees print's positional arguments first; it
	// returns true when it printed them itself (documents).
	PrintHook func(t *Thread, args []Value, sep, end string) bool
	// MaxPrintBytes, when set, stops print() of text estimated over it
	// before it is rendered (Budget kind "observation").
	MaxPrintBytes uint64

	line      int
	depth     int
	nextCheck uint64
	cancel    atomic.Pointer[error]
	globals   map[string]Value
	builtins  map[string]Value
	modules   map[string]*Module
	popFinger int
}

// maxCallDepth bounds Python recursion (RecursionError past it).
const maxCallDepth = 1000

// Cancel stops the program at its next check with err (uncatchable).
func (t *Thread) Cancel(err error) { t.cancel.CompareAndSwap(nil, &err) }

// Line is the line of the statement running now.
func (t *Thread) Line() int { return t.line }

// step counts one unit of interpreter work.
func (t *Thread) step() {
	t.Steps++
	if t.Steps >= t.nextCheck {
		t.slowCheck()
	}
}

func (t *Thread) slowCheck() {
	if t.MaxSteps > 0 && t.Steps > t.MaxSteps {
		t.Stop(t.budgetErr("steps", "the program", t.Steps, t.Steps, t.MaxSteps))
	}
	if e := t.cancel.Load(); e != nil {
		t.Stop(*e)
	}
	if t.Check != nil {
		if err := t.Check(); err != nil {
			t.Stop(err)
		}
	}
	every := t.CheckEvery
	if every == 0 {
		every = 10_000
	}
	t.nextCheck = t.Steps + every
	if t.MaxSteps > 0 && t.nextCheck > t.MaxSteps+1 {
		t.nextCheck = t.MaxSteps + 1
	}
}

func (t *Thread) budgetErr(kind, what string, need, used, limit uint64) error {
	if t.Budget != nil {
		return t.Budget(kind, what, need, used, limit)
	}
	return fmt.Errorf("%s budget of %d exceeded: %s needs %d, %d used", kind, limit, what, need, used)
}

// Charge accounts an operation of bytes and steps before it runs; past a
// budget it stops the program (uncatchable).
func (t *Thread) Charge(what string, bytes, steps uint64) {
	if bytes > 0 && t.MaxMem > 0 {
		if bytes > t.MaxMem || t.Mem > t.MaxMem-bytes {
			t.Stop(t.budgetErr("memory", what, bytes, t.Mem, t.MaxMem))
		}
	}
	t.Mem += bytes
	if steps > 0 {
		if t.MaxSteps > 0 && (steps > t.MaxSteps || t.Steps > t.MaxSteps-steps) {
			t.Stop(t.budgetErr("steps", what, steps, t.Steps, t.MaxSteps))
		}
		t.Steps += steps
		if t.Steps >= t.nextCheck {
			t.slowCheck()
		}
	}
}

// Program is a compiled program, safe to run many times concurrently
// (each run with its own Thread).
type Program struct {
	body []stmtFn
	mod  *File
}

// Compile parses and compiles src. Errors are *Error.
func Compile(src string) (*Program, error) {
	mod, err := Parse(src)
	if err != nil {
		return nil, err
	}
	c := &compiler{}
	var prog *Program
	if err := c.protect(func() {
		sc := newModuleScope(mod.Body)
		collectStmts(mod.Body, sc)
		prog = &Program{body: c.stmts(sc, mod.Body), mod: mod}
	}); err != nil {
		return nil, err
	}
	return prog, nil
}

// ExecError is an uncaught Python exception.
type ExecError struct {
	Exc *Exception
}

func (e *ExecError) Error() string {
	return e.Exc.Error()
}

func (e *ExecError) Unwrap() error { return e.Exc.Host }

// Exec runs the program with the given predeclared globals (the SDK's
// primitives, question). It returns nil, an *ExecError for an uncaught
// exception (Exc.Host holds an SDK failure's own error), or the error that
// stopped it (a budget, a deadline: Thread.Stop's argument).
func (t *Thread) Exec(p *Program, predeclared map[string]Value) (err error) {
	t.globals = map[string]Value{}
	t.builtins = universe
	t.modules = map[string]*Module{}
	for k, v := range predeclared {
		t.globals[k] = v
	}
	t.nextCheck = 0
	t.slowCheckSafe()
	defer func() {
		if r := recover(); r != nil {
			err = recoverErr(r)
		}
	}()
	fr := &frame{t: t}
	execBlock(fr, p.body)
	return nil
}

func (t *Thread) slowCheckSafe() {
	every := t.CheckEvery
	if every == 0 {
		every = 10_000
	}
	t.nextCheck = every
}

// Globals returns the program's global variables after Exec.
func (t *Thread) Globals() map[string]Value { return t.globals }

func recoverErr(r any) error {
	switch x := r.(type) {
	case *Exception:
		return &ExecError{x}
	case *Fatal:
		return x.Err
	case runtime.Error:
		if errors.Is(x, errStackGuard) {
			return x
		}
		panic(r)
	}
	panic(r)
}

var errStackGuard = errors.New("python: stack guard")
