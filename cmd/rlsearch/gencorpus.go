package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/rlsearch/rlsearch/bench/gencorpus"
)

// gencorpusCmd writes a generated corpus (gencorpus.WriteFile).
func gencorpusCmd(fs *flag.FlagSet) runFunc {
	var cfg gencorpus.Config
	fs.StringVar(&cfg.Seed, "seed-corpus", dataFile("corpus.jsonl"), "real seed corpus JSONL (plain, .gz or .zst); its passages come first, unchanged")
	fs.IntVar(&cfg.N, "n", 0, "total passages to write, seed passages included (required; wiki-18 is 21015324)")
	fs.Int64Var(&cfg.RandSeed, "seed", 1, "random seed: the same seed, corpus and flags give the same bytes")
	fs.StringVar(&cfg.Model, "model", gencorpus.ModelTopical, "generative model: topical (words from a seed passage's topic mixed with the global unigram) or unigram (independent words)")
	fs.Float64Var(&cfg.TopicProb, "topic-prob", gencorpus.DefaultTopicProb, "topical model: probability that a word comes from the topic passage, in (0, 1]")
	rare := fs.Bool("rare-variants", true, "topical model: write words that occur once in the seed as suffixed variants whose number grows with the square root of the corpus size (Heaps' law); false keeps the seed vocabulary")
	fs.IntVar(&cfg.Workers, "workers", 0, "generating goroutines (0 = GOMAXPROCS); the output does not depend on it")
	out := fs.String("out", "", "output JSONL file, written atomically; .zst or .gz compresses (required)")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	return func(ctx context.Context, _ []string, stdout, stderr io.Writer) error {
		cfg.NoRareVariants = !*rare
		if !(cfg.TopicProb > 0 && cfg.TopicProb <= 1) { // Config reads 0 as the default: check the flag
			return usageErr("--topic-prob %v: want a probability in (0, 1]", cfg.TopicProb)
		}
		st, err := gencorpus.WriteFile(ctx, cfg, *out, progressTo(stderr, !*quiet))
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s: %d passages (%d real, %d generated), %.1f MB uncompressed, %.1fs, %.0f passages/s\n",
			*out, st.Passages, st.Real, st.Generated, float64(st.Bytes)/1e6, st.Elapsed.Seconds(), float64(st.Passages)/max(st.Elapsed.Seconds(), 1e-9))
		return nil
	}
}
