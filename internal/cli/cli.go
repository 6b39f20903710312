// Package cli is the small command framework of cmd/rlsearch over the
// standard library's flag package: a table of commands, each binding its
// flags and returning its body; usage text derived from the command's
// fields and flag definitions; flags accepted after positional arguments;
// required flags checked in one place; and usage errors told apart from
// failures (exit status 2 and 1). It holds no command of its own.
//
// Example:
//
//	cmds := []cli.Command{{Name: "greet", Summary: "say hello", Args: "NAME", Flags: func(fs *flag.FlagSet) cli.RunFunc {
//		loud := fs.Bool("loud", false, "shout")
//		return func(ctx context.Context, args []string, stdout, stderr io.Writer) error { ... }
//	}}}
//	err := cli.RunSub(ctx, "prog", cmds, os.Args[1:], os.Stdout, os.Stderr)
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
)

// ErrUsage marks bad flags or arguments (Usagef).
var ErrUsage = errors.New("usage")

// Usagef returns an error wrapping ErrUsage with the formatted message.
func Usagef(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrUsage, fmt.Sprintf(format, a...))
}

// RunFunc runs a command on its positional arguments.
type RunFunc func(ctx context.Context, args []string, stdout, stderr io.Writer) error

// Command is one (sub)command. Either Run parses its own arguments, or
// Flags binds the command's flags on a new FlagSet and returns the body,
// which Exec runs after Parse with the positional arguments.
type Command struct {
	Name, Summary string
	Run           RunFunc
	Flags         func(fs *flag.FlagSet) RunFunc
	Args          string   // positional arguments in the usage line; "" = none accepted
	Required      []string // flags that must be set (see Required)
	About         string   // text printed between the usage line and the flags
}

// Exec runs c as `prog c.Name args...`: with Flags, it parses args, prints
// the usage (`usage: prog name --req REQ [flags] ARGS`, About, the flag
// defaults) on -h or a bad flag, rejects positional arguments when c.Args
// is "", checks c.Required, then runs the body. Errors: flag.ErrHelp for
// -h, ErrUsage (wrapped) for bad usage, else the body's.
func (c Command) Exec(ctx context.Context, prog string, args []string, stdout, stderr io.Writer) error {
	if c.Run != nil {
		return c.Run(ctx, args, stdout, stderr)
	}
	name := prog + " " + c.Name
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	body := c.Flags(fs)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s", name)
		for _, r := range c.Required {
			fmt.Fprintf(fs.Output(), " --%s %s", r, strings.ToUpper(r))
		}
		fmt.Fprintf(fs.Output(), " [flags]%s\n\n", strings.TrimRight(" "+c.Args, " "))
		if c.About != "" {
			fmt.Fprintf(fs.Output(), "%s\n\n", c.About)
		}
		fs.PrintDefaults()
	}
	if err := Parse(fs, args, stderr); err != nil {
		return err
	}
	if c.Args == "" && fs.NArg() > 0 {
		return Usagef("unexpected arguments %q", fs.Args())
	}
	if err := Required(fs, c.Required...); err != nil {
		return err
	}
	return body(ctx, fs.Args(), stdout, stderr)
}

// List prints the usage line and the commands of prog.
func List(w io.Writer, prog string, cs []Command) {
	fmt.Fprintf(w, "usage: %s <command> [flags]\n\ncommands:\n", prog)
	width := 7
	for _, c := range cs {
		width = max(width, len(c.Name))
	}
	for _, c := range cs {
		fmt.Fprintf(w, "  %-*s %s\n", width, c.Name, c.Summary)
	}
	fmt.Fprintf(w, "\nrun '%s <command> -h' for the flags of a command\n", prog)
}

// RunSub executes the command of cs named by args[0] (Exec); without one,
// or with -h, --help or help, it lists them (List) on stderr and returns
// a usage error or flag.ErrHelp.
func RunSub(ctx context.Context, prog string, cs []Command, args []string, stdout, stderr io.Writer) error {
	for _, c := range cs {
		if len(args) > 0 && c.Name == args[0] {
			return c.Exec(ctx, prog, args[1:], stdout, stderr)
		}
	}
	List(stderr, prog, cs)
	switch {
	case len(args) == 0:
		return Usagef("missing command")
	case args[0] == "-h" || args[0] == "--help" || args[0] == "help":
		return flag.ErrHelp
	}
	return Usagef("unknown command %q", args[0])
}

// Main runs a binary: run gets os.Args[1:], the standard streams and a
// context cancelled by SIGINT or SIGTERM; the process exits with its code.
func Main(run func(ctx context.Context, args []string, stdout, stderr io.Writer) int) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Run executes the command of cs named by args[0] (RunSub) and returns the
// process exit code (Report).
func Run(ctx context.Context, prog string, cs []Command, args []string, stdout, stderr io.Writer, usage ...error) int {
	return Report(stderr, prog, args, RunSub(ctx, prog, cs, args, stdout, stderr), usage...)
}

// Report returns the exit code of err (ExitCode) and, unless it is 0,
// prints err on stderr as one line "prog CMD: err".
func Report(stderr io.Writer, prog string, args []string, err error, usage ...error) int {
	code := ExitCode(err, usage...)
	if code != 0 {
		fmt.Fprintf(stderr, "%s: %v\n", strings.Join(append([]string{prog}, args[:min(len(args), 1)]...), " "), err)
	}
	return code
}

// ExitCode is the process exit status of err: 0 for nil or flag.ErrHelp,
// 2 when err wraps ErrUsage or one of usage (the packages' errors that
// mean bad flags), else 1.
func ExitCode(err error, usage ...error) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	for _, u := range append(usage, ErrUsage) {
		if errors.Is(err, u) {
			return 2
		}
	}
	return 1
}

// Parse parses args into fs, allowing flags after positional arguments
// ("search 'question' -k 5"); the positional arguments are left in
// fs.Args(), in order. "--" ends flag parsing. The usage and flag errors go
// to stderr. Errors: flag.ErrHelp, or a flag error wrapping ErrUsage.
func Parse(fs *flag.FlagSet, args []string, stderr io.Writer) error {
	fs.SetOutput(stderr)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return err
			}
			return Usagef("%v", err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		// flag.Parse stops at the first positional argument, or after "--".
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	return fs.Parse(append([]string{"--"}, pos...))
}

// Required returns a usage error naming all of names ("--a, --b and --c
// are required") when any of those flags of fs holds its zero value ("" or
// 0), or an error naming a flag fs does not define.
func Required(fs *flag.FlagSet, names ...string) error {
	for _, n := range names {
		f := fs.Lookup(n)
		if f == nil {
			return fmt.Errorf("cli: %s defines no flag --%s", fs.Name(), n)
		}
		if v := f.Value.String(); v != "" && v != "0" {
			continue
		}
		l := "--" + strings.Join(names, ", --")
		if i := strings.LastIndex(l, ", "); i >= 0 {
			return Usagef("%s and %s are required", l[:i], l[i+2:])
		}
		return Usagef("%s is required", l)
	}
	return nil
}

// Ints parses a comma-separated list of positive integers such as
// "1,5,10,20", the value of flag name. Errors wrap ErrUsage and name the
// bad element.
func Ints(name, s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n <= 0 {
			return nil, Usagef("bad %s %q in %q: want positive integers separated by commas", name, part, s)
		}
		out = append(out, n)
	}
	return out, nil
}

// KeyValues is a repeatable KEY=VALUE flag (flag.Value) filling a map:
// bind it with fs.Var(cli.KeyValues(m), name, usage); m must be non-nil.
type KeyValues map[string]string

func (kv KeyValues) String() string { return fmt.Sprint(map[string]string(kv)) }

// Set adds one KEY=VALUE; both sides must be non-empty.
func (kv KeyValues) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" || val == "" {
		return fmt.Errorf("%q: want KEY=VALUE", v)
	}
	kv[k] = val
	return nil
}
