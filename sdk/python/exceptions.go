package python

import (
	"fmt"
	"strings"
)

// ExcClass is a builtin exception class.
type ExcClass struct {
	Name string
	Base *ExcClass
}

// Exception is a raised exception instance.
type Exception struct {
	Class *ExcClass
	Args  []Value
	Line  int   // the program line where it was raised
	Host  error // the host's error (an SDK failure), if it came from one
	// Cause is the __cause__ (raise ... from ...); not shown.
	Cause Value
}

func (e *Exception) Error() string {
	m := e.StrMsg()
	if m == "" {
		return e.Class.Name
	}
	return e.Class.Name + ": " + m
}

// StrMsg is str(e).
func (e *Exception) StrMsg() string {
	switch len(e.Args) {
	case 0:
		return ""
	case 1:
		if e.Class == KeyError {
			return Repr(e.Args[0])
		}
		return Str(e.Args[0])
	}
	return Repr(Tuple(e.Args))
}

// Repr is repr(e).
func (e *Exception) Repr() string {
	parts := make([]string, len(e.Args))
	for i, a := range e.Args {
		parts[i] = Repr(a)
	}
	return e.Class.Name + "(" + strings.Join(parts, ", ") + ")"
}

// IsSubclass reports whether c is cls or derives from it.
func (c *ExcClass) IsSubclass(cls *ExcClass) bool {
	for x := c; x != nil; x = x.Base {
		if x == cls {
			return true
		}
	}
	return false
}

func newClass(name string, base *ExcClass) *ExcClass { return &ExcClass{Name: name, Base: base} }

// The builtin exception hierarchy (a subset of CPython's).
var (
	BaseException       = newClass("BaseException", nil)
	Exception_          = newClass("Exception", BaseException)
	ArithmeticError     = newClass("ArithmeticError", Exception_)
	ZeroDivisionError   = newClass("ZeroDivisionError", ArithmeticError)
	OverflowError       = newClass("OverflowError", ArithmeticError)
	LookupError         = newClass("LookupError", Exception_)
	KeyError            = newClass("KeyError", LookupError)
	IndexError          = newClass("IndexError", LookupError)
	ValueError          = newClass("ValueError", Exception_)
	UnicodeError        = newClass("UnicodeError", ValueError)
	TypeError           = newClass("TypeError", Exception_)
	AttributeError      = newClass("AttributeError", Exception_)
	NameError           = newClass("NameError", Exception_)
	UnboundLocalError   = newClass("UnboundLocalError", NameError)
	RuntimeError        = newClass("RuntimeError", Exception_)
	RecursionError      = newClass("RecursionError", RuntimeError)
	NotImplementedError = newClass("NotImplementedError", RuntimeError)
	StopIteration       = newClass("StopIteration", Exception_)
	AssertionError      = newClass("AssertionError", Exception_)
	JSONDecodeError     = newClass("JSONDecodeError", ValueError)
	ReError             = newClass("error", Exception_)
	StatisticsError     = newClass("StatisticsError", ValueError)
	// SDKError is what a failing retrieval primitive raises (unknown
	// document, conflicting documents, unavailable route).
	SDKError = newClass("SDKError", Exception_)
)

var excClasses = []*ExcClass{BaseException, Exception_, ArithmeticError, ZeroDivisionError, OverflowError, LookupError,
	KeyError, IndexError, ValueError, UnicodeError, TypeError, AttributeError, NameError, UnboundLocalError, RuntimeError,
	RecursionError, NotImplementedError, StopIteration, AssertionError, SDKError}

// Fatal is an error that ends the program and cannot be caught by
// try/except: an exhausted budget, a deadline, a cancellation.
type Fatal struct{ Err error }

func (f *Fatal) Error() string { return f.Err.Error() }
func (f *Fatal) Unwrap() error { return f.Err }

// raise panics with a new exception of cls.
func (t *Thread) raise(cls *ExcClass, format string, args ...any) {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	panic(&Exception{Class: cls, Args: []Value{msg}, Line: t.line})
}

// RaiseHost raises a catchable SDKError carrying the host's error: when the
// program does not catch it, Exec returns err itself.
func (t *Thread) RaiseHost(err error) {
	panic(&Exception{Class: SDKError, Args: []Value{err.Error()}, Line: t.line, Host: err})
}

// Stop ends the program with an uncatchable error (a budget, a deadline).
func (t *Thread) Stop(err error) { panic(&Fatal{err}) }
