package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/rlsearch/rlsearch/bench/gencorpus"
	"github.com/rlsearch/rlsearch/corpus"
)

// defaultSeedCorpus is the shared wiki_multihop corpus ($RLSEARCH_DATA, else
// the shared/data found above the working directory).
func defaultSeedCorpus() string {
	return filepath.Join(corpus.DataDir(), "wiki_multihop", "corpus.jsonl")
}

func runGencorpus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gencorpus", flag.ContinueOnError)
	var (
		cfg   gencorpus.Config
		out   string
		quiet bool
		rare  bool
	)
	fs.StringVar(&cfg.Seed, "seed-corpus", defaultSeedCorpus(), "real seed corpus JSONL (plain, .gz or .zst); its passages come first, unchanged")
	fs.IntVar(&cfg.N, "n", 0, "total passages to write, seed passages included (required; wiki-18 is 21015324)")
	fs.Int64Var(&cfg.RandSeed, "seed", 1, "random seed: the same seed, corpus and flags give the same bytes")
	fs.StringVar(&cfg.Model, "model", gencorpus.ModelTopical, "generative model: topical (words from a seed passage's topic mixed with the global unigram) or unigram (independent words)")
	fs.Float64Var(&cfg.TopicProb, "topic-prob", gencorpus.DefaultTopicProb, "topical model: probability that a word comes from the topic passage, in (0, 1]")
	fs.BoolVar(&rare, "rare-variants", true, "topical model: write words that occur once in the seed as suffixed variants whose number grows with the square root of the corpus size (Heaps' law); false keeps the seed vocabulary")
	fs.IntVar(&cfg.Workers, "workers", 0, "generating goroutines (0 = GOMAXPROCS); the output does not depend on it")
	fs.StringVar(&out, "out", "", "output JSONL file, written atomically; .zst or .gz compresses (required)")
	fs.BoolVar(&quiet, "quiet", false, "no progress on stderr")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	cfg.NoRareVariants = !rare
	if fs.NArg() > 0 {
		return usageErr("unexpected arguments %q", fs.Args())
	}
	if out == "" || cfg.N == 0 {
		return usageErr("--n and --out are required")
	}
	topicSet := false
	fs.Visit(func(f *flag.Flag) { topicSet = topicSet || f.Name == "topic-prob" })
	if topicSet && !(cfg.TopicProb > 0 && cfg.TopicProb <= 1) {
		return usageErr("--topic-prob %v: want a probability in (0, 1]", cfg.TopicProb)
	}
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		return usageErr("--out %s is a directory; name the file to write", out)
	}
	if err := cfg.Validate(); err != nil {
		return usageErr("%v", err)
	}
	var progress io.Writer
	if !quiet {
		progress = stderr
	}
	st, err := gencorpus.WriteFile(ctx, cfg, out, progress)
	if err != nil {
		if errors.Is(err, gencorpus.ErrBadConfig) {
			return usageErr("%v", err)
		}
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: %d passages (%d real, %d generated), %.1f MB uncompressed, %.1fs, %.0f passages/s\n",
		out, st.Passages, st.Real, st.Generated, float64(st.Bytes)/1e6, st.Elapsed.Seconds(),
		float64(st.Passages)/max(st.Elapsed.Seconds(), 1e-9))
	return nil
}
