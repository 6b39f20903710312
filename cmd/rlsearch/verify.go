package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/rlsearch/rlsearch/verify"
)

// verifyCmd checks PATH in full, whatever it is (package verify). Exit
// status 0 when intact, 1 with a message naming the file (and, for block
// formats, the block and offset) of the first corruption.
func verifyCmd(fs *flag.FlagSet) runFunc {
	quiet := fs.Bool("quiet", false, "no progress lines")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		if len(args) != 1 {
			return usageErr("want one index, collection or file path, got %d arguments", len(args))
		}
		start := time.Now()
		kind, err := verify.Path(ctx, args[0], progressTo(stderr, !*quiet))
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: ok, %s (verified in %.1fs)\n", args[0], kind, time.Since(start).Seconds())
		return nil
	}
}
