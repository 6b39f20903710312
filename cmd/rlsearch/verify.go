package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/rlsearch/rlsearch/verify"
)

// runVerify checks PATH in full, whatever it is (package verify). Exit
// status 0 when intact, 1 with a message naming the file (and, for block
// formats, the block and offset) of the first corruption.
func runVerify(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	quiet := fs.Bool("quiet", false, "no progress lines")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: rlsearch verify [--quiet] PATH\n\nReads every file of PATH once, checking checksums, decoding and counts. PATH is an index,\na hybrid collection, a directory of them, or one stored file (see package verify).\n\n")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageErr("want one index, collection or file path, got %d arguments", fs.NArg())
	}
	path := fs.Arg(0)
	var progress io.Writer
	if !*quiet {
		progress = stderr
	}
	start := time.Now()
	kind, err := verify.Path(ctx, path, progress)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: ok, %s (verified in %.1fs)\n", path, kind, time.Since(start).Seconds())
	return nil
}
