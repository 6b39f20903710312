package rlsearch

import (
	"errors"
	"fmt"
)

// Error kinds that the HTTP layer (server) maps to statuses.
// Domain packages (sdk, rerank, reward, hybrid) return them, wrapped, from
// their plain Serve functions and never import net/http:
//
//	ErrBadInput   (and *FieldError)  → 400, the field path in the JSON error
//	ErrTooLarge   (with ErrBadInput) → 413
//	ErrOverloaded                    → 503 with Retry-After
//	context.Canceled                 → 499 (the client went away)
//	context.DeadlineExceeded         → 503 with Retry-After
//	anything else                    → 500 (our fault: model, index, encoder)
var (
	// ErrTooLarge marks a request over a configured limit (items per
	// request, results per request). Errors wrapping it should also wrap
	// ErrBadInput (TooLarge does both).
	ErrTooLarge = errors.New("rlsearch: request over a limit")
	// ErrOverloaded marks work refused because the server is saturated; the
	// client should retry later.
	ErrOverloaded = errors.New("rlsearch: overloaded")
)

// FieldError is bad input at one field of a request. Field is the JSON
// path of the field ("queries", "programs[2].budgets.max_steps", "" for
// the body as a whole). It wraps ErrBadInput and Err.
type FieldError struct {
	Field string
	Err   error
}

// Error returns the message of Err: the path is carried separately (the
// JSON error's "field"), so messages name it themselves where useful.
func (e *FieldError) Error() string { return e.Err.Error() }

// Unwrap returns ErrBadInput and Err.
func (e *FieldError) Unwrap() []error { return []error{ErrBadInput, e.Err} }

// FieldPath returns Field (see FieldPather).
func (e *FieldError) FieldPath() string { return e.Field }

// FieldPather is implemented by errors that name the JSON path of the
// request field at fault; the HTTP layer puts it in the error's "field".
type FieldPather interface {
	FieldPath() string
}

// BadField returns a *FieldError for field with a formatted message.
func BadField(field, format string, args ...any) error {
	return &FieldError{Field: field, Err: fmt.Errorf(format, args...)}
}

// TooLarge returns a *FieldError for field that also wraps ErrTooLarge.
func TooLarge(field, format string, args ...any) error {
	return &FieldError{Field: field, Err: tooLarge{fmt.Sprintf(format, args...)}}
}

type tooLarge struct{ msg string }

func (e tooLarge) Error() string        { return e.msg }
func (e tooLarge) Is(target error) bool { return target == ErrTooLarge }
