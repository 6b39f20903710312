package main

import (
	"flag"
	"io"
	"testing"
)

// TestGPUCanaryFlag: --gpu-canary is on unless turned off, like
// --model-canary, and reaches app.IndexConfig.SkipGPUCanary.
func TestGPUCanaryFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		skip bool
	}{{nil, false}, {[]string{"--gpu-canary"}, false}, {[]string{"--gpu-canary=true"}, false}, {[]string{"--gpu-canary=false"}, true}} {
		var f indexFlags
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		f.bind(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if got := f.config().SkipGPUCanary; got != tc.skip {
			t.Errorf("%v: SkipGPUCanary %v, want %v", tc.args, got, tc.skip)
		}
	}
	var f indexFlags
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.bind(fs)
	if err := fs.Parse([]string{"--gpu-canary=maybe"}); err == nil {
		t.Error("--gpu-canary=maybe accepted")
	}
}

// TestHNSWCompressedFlag: --hnsw-compressed is off by default and reaches
// app.IndexConfig.HNSWCompressed for every command that opens an index
// (bind and serve's bindCorpora share bindOpen).
func TestHNSWCompressedFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{{nil, false}, {[]string{"--hnsw-compressed"}, true}, {[]string{"--hnsw-compressed=false"}, false}} {
		for _, corpora := range []bool{false, true} {
			var f indexFlags
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			if corpora {
				f.bindCorpora(fs)
			} else {
				f.bind(fs)
			}
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			if got := f.config().HNSWCompressed; got != tc.want {
				t.Errorf("%v (serve's --index: %v): HNSWCompressed %v, want %v", tc.args, corpora, got, tc.want)
			}
		}
	}
}
