package python

// NewBuiltin returns a host function (an SDK primitive) with its cost rule:
// cost runs before fn and charges the thread (Thread.Charge); it must not
// be nil (TestCostRules).
func NewBuiltin(name string, cost func(t *Thread, args []Value), fn func(t *Thread, args []Value, kw []KV) Value) *Builtin {
	if cost == nil {
		panic("python: NewBuiltin " + name + " without a cost rule")
	}
	return &Builtin{Name: name, Fn: func(t *Thread, args []Value, kw []KV) Value {
		cost(t, args)
		return fn(t, args, kw)
	}}
}

// ParseArgs binds positional and keyword arguments to names (a trailing
// "?" marks an optional one, nil when absent); a mismatch raises TypeError.
func ParseArgs(t *Thread, fname string, args []Value, kw []KV, names ...string) []Value {
	return argParse(t, fname, args, kw, names...)
}

// Raise raises a catchable exception of cls with message msg.
func (t *Thread) Raise(cls *ExcClass, msg string) { t.raise(cls, "%s", msg) }

// NewList returns a list value holding vs.
func NewList(vs []Value) *List { return &List{V: vs} }

// TypeNameOf is type(v).__name__.
func TypeNameOf(v Value) string { return typeName(v) }

// Hasher is implemented by an Object whose CPython hash is known (a Doc
// hashes like its id), so that sets of them iterate in CPython's order.
type Hasher interface{ PyHash() int64 }

// StrHash is CPython's hash of a str under PYTHONHASHSEED=0.
func StrHash(s string) int64 { return hashStr(s) }

// Unsupported is the error that stops a program using a refused
// construct at run time (getattr of a dunder name): unsupported_feature.
type Unsupported struct{ Msg string }

func (u *Unsupported) Error() string { return u.Msg }

// Universe lists the builtin names a program sees (for TestCostRules).
func Universe() map[string]Value { return universe }
