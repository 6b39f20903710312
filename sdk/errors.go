package sdk

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrorCode classifies how a program ended. It is part of Result and of the
// JSON API; the strings are stable.
type ErrorCode string

// Error codes. CodeOK means the program ran to completion within budget.
const (
	CodeOK          ErrorCode = "ok"
	CodeSyntax      ErrorCode = "syntax_error"        // the source does not parse or resolve
	CodeUnsupported ErrorCode = "unsupported_feature" // Python syntax or builtins Starlark lacks (import, class, try, load, open, ...)
	CodeRuntime     ErrorCode = "runtime_error"       // a Starlark runtime error or a bad argument to a builtin
	CodeBudget      ErrorCode = "budget_exceeded"     // steps, time, calls, candidates, printed documents, observation tokens, memory, source size
	CodeUnknownDoc  ErrorCode = "unknown_document"    // doc(id) named a document this program has not retrieved
	CodeConflict    ErrorCode = "document_conflict"   // the same id with different contents
	CodeUnavailable ErrorCode = "unavailable"         // a route or the reranker is not configured on this server
	CodeInternal    ErrorCode = "internal_error"      // the index or a model failed; not the program's fault
	CodeCancelled   ErrorCode = "cancelled"           // the caller's context was cancelled (client gone, server stopping)
	CodeOverloaded  ErrorCode = "overloaded"          // the process heap guard stopped it (Config.MaxHeapBytes): not the program's answer; Serve answers 503
)

// Sentinel errors of the Go API. Errors returned by primitives wrap one of
// them; (*Error).Code maps them to an ErrorCode.
var (
	ErrBudget      = errors.New("sdk: budget exceeded")
	ErrConflict    = errors.New("sdk: same document id with different contents")
	ErrUnknownDoc  = errors.New("sdk: unknown document")
	ErrUnavailable = errors.New("sdk: not available")
	ErrBadArgument = errors.New("sdk: bad argument")
	ErrNotTyped    = errors.New("sdk: not in the typed subset")
)

// Error is an error with an ErrorCode; primitives and the runtime return it
// so that callers (and the observation) can say what went wrong.
type Error struct {
	Code ErrorCode
	Msg  string
	err  error // wrapped sentinel or cause
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.err }

func newErr(code ErrorCode, sentinel error, format string, a ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, a...), err: sentinel}
}

// codeOf returns the ErrorCode of err (CodeInternal for foreign errors).
func codeOf(err error) ErrorCode {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// ctxError maps a context error that a primitive returned (a retriever or
// the reranker seeing the program's deadline) to budget_exceeded (time) or
// cancelled; ok is false when err is not a context error.
func ctxError(err error, timeout time.Duration) (*Error, bool) {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return newErr(CodeBudget, ErrBudget, "time budget of %v exceeded", timeout), true
	case errors.Is(err, context.Canceled):
		return newErr(CodeCancelled, err, "execution cancelled: %v", err), true
	}
	return nil, false
}
