package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/rlsearch/rlsearch/index"
)

// runVerify checks every file of an index directory (index.Verify): exit
// status 0 when intact, 1 with a message naming the file, block and offset
// of the first corruption.
func runVerify(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	quiet := fs.Bool("quiet", false, "no progress lines")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: rlsearch verify [--quiet] DIR\n\nReads every file of the index in DIR once and checks checksums, decoding and counts.\n\n")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageErr("want one index directory, got %d arguments", fs.NArg())
	}
	dir := fs.Arg(0)
	var cfg index.VerifyConfig
	if !*quiet {
		cfg.Progress = stderr
	}
	start := time.Now()
	if err := index.Verify(ctx, dir, cfg); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: ok (verified in %.1fs)\n", dir, time.Since(start).Seconds())
	return nil
}
