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
		fmt.Fprintf(fs.Output(), `usage: rlsearch verify [--quiet] PATH

Reads every file under PATH once and checks checksums, decoding and counts. PATH is
  an index directory (meta.json), a hybrid collection (collection.json), a directory
  holding collections or indexes (each is verified), or a single file: a dense shard,
  an HNSW graph, a BM25 index, a docstore or a collection's rows.db (SQLite
  integrity_check, plus the collection manifest's size and CRC-32C when its
  directory holds one).

`)
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
