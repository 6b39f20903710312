// Package python is the sandbox's Python front end: a scanner, a parser to
// an AST with line numbers, and a closure-compiled tree-walking interpreter
// for the Python 3 that retrieval policies write, in pure Go (no cgo, so
// it builds with CGO_ENABLED=0).
//
// Compile parses and compiles a program (errors are *Error: syntax errors,
// or refused constructs with Unsupported set, each one line naming the
// construct, its line and a fix). A Thread runs a compiled Program with
// host globals (the SDK's primitives, made with NewBuiltin); Thread.Exec
// returns nil, an *ExecError for an uncaught Python exception (its Exc has
// the class, str(e) and the line; Exc.Host carries an SDK failure raised
// with Thread.RaiseHost), or the error a budget or Cancel stopped it with.
//
// Values follow CPython 3.11: repr/str (shortest float repr), code-point
// strings, insertion-ordered dicts, sets with CPython's table layout and
// hashes (SipHash-1-3 with a zero key for str, as under PYTHONHASHSEED=0),
// int64 promoted to math/big on overflow (up to 2^26 bits; larger is a
// memory budget stop), the exception hierarchy (BaseException > Exception
// > LookupError > KeyError, ...), banker's round, %-formatting, str.format
// and f-strings with the format-spec mini-language. Modules: math, re (Go's
// linear-time regexp; lookaround and backreferences raise re.error),
// collections, itertools, functools, heapq, statistics, json, string.
//
// Budgets: Thread.MaxSteps counts one step per statement, call and loop
// iteration plus each builtin's cost rule; Thread.MaxMem bounds the bytes
// charged (an upper estimate of allocations, cumulative). Every builtin,
// type, method and module function has a cost rule that charges before it
// runs (TestCostRules enumerates them). Budget stops, Cancel and Check
// errors are uncatchable by try/except. Recursion is bounded at 1,000
// nested calls (CPython's default limit), a depth budget stop.
//
// A Program is immutable and safe for concurrent use by many Threads; a
// Thread is not safe for concurrent use, except Cancel.
//
// Example:
//
//	p, err := python.Compile("print(f'{1/3:.2f}')")
//	if err != nil { ... }
//	t := &python.Thread{MaxSteps: 1e6, MaxMem: 64 << 20, Print: func(_ *python.Thread, s string) error { fmt.Print(s); return nil }}
//	err = t.Exec(p, nil) // prints 0.33
package python
