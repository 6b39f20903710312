package cmdflags

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/rlsearch/rlsearch"
)

// Offable is the type of a numeric option that follows the module's
// options convention (rlsearch.Off): 0 means the default, a negative
// value turns the feature off.
type Offable interface {
	int | int64 | float64
}

// OffFlag is a numeric flag of an Offable field: it accepts a number,
// stored unchanged (no remapping: 0 reaches the Config as 0, which means
// the field's default), or the word "off", stored as rlsearch.Off. String
// prints "off" for a negative value.
//
// Name is the flag's name, for the parse error.
type OffFlag[T Offable] struct {
	P    *T
	Name string
}

// Off binds an OffFlag on p: the default def, and usage followed by the
// convention's reminder.
func Off[T Offable](fs *flag.FlagSet, p *T, name string, def T, usage string) {
	*p = def
	fs.Var(OffFlag[T]{p, name}, name, usage)
}

func (f OffFlag[T]) String() string {
	if f.P == nil {
		return ""
	}
	if *f.P < 0 {
		return "off"
	}
	switch v := any(*f.P).(type) {
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case int:
		return strconv.Itoa(v)
	}
	return strconv.FormatInt(int64(*f.P), 10)
}

// Set parses a number or "off".
func (f OffFlag[T]) Set(s string) error {
	if strings.EqualFold(strings.TrimSpace(s), "off") {
		*f.P = T(rlsearch.Off)
		return nil
	}
	var zero T
	bad := fmt.Errorf("--%s %q: want a number or off", f.Name, s)
	switch any(zero).(type) {
	case float64:
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return bad
		}
		*f.P = T(v)
	default:
		v, err := strconv.ParseInt(s, 0, 64)
		if err != nil {
			return bad
		}
		*f.P = T(v)
	}
	return nil
}

// DeprecatedBool binds old as a deprecated spelling of the boolean flag
// new, which must already be bound on p: setting old sets *p and prints
// one line to the flag set's output (stderr under package cli),
// `PROG: "--old" is deprecated, use "--new"`. Kept for one release after
// a rename (issue 37: --verify-docs became --check-docs).
func DeprecatedBool(fs *flag.FlagSet, p *bool, old, new string) {
	fs.Var(deprecatedBool{fs, p, old, new}, old, fmt.Sprintf("deprecated spelling of --%s", new))
}

type deprecatedBool struct {
	fs       *flag.FlagSet
	p        *bool
	old, new string
}

func (d deprecatedBool) String() string {
	if d.p == nil {
		return "false"
	}
	return strconv.FormatBool(*d.p)
}

func (d deprecatedBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	*d.p = v
	prog, _, _ := strings.Cut(d.fs.Name(), " ")
	fmt.Fprintf(d.fs.Output(), "%s: %q is deprecated, use %q\n", prog, "--"+d.old, "--"+d.new)
	return nil
}

func (d deprecatedBool) IsBoolFlag() bool { return true }
