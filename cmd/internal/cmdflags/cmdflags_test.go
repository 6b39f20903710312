package cmdflags

import (
	"flag"
	"io"
	"testing"
)

// TestSkipFlags: --gpu-canary and --self-check are on unless turned off,
// like --model-canary, and reach app.IndexConfig.SkipGPUCanary and
// SkipSelfCheck; a value that is no boolean is refused.
func TestSkipFlags(t *testing.T) {
	bind := func() (*Index, *flag.FlagSet) {
		var f Index
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		f.Bind(fs)
		return &f, fs
	}
	for _, tc := range []struct {
		args          []string
		canary, check bool // want SkipGPUCanary, SkipSelfCheck
	}{
		{nil, false, false},
		{[]string{"--gpu-canary"}, false, false},
		{[]string{"--gpu-canary=true"}, false, false},
		{[]string{"--gpu-canary=false"}, true, false},
		{[]string{"--self-check"}, false, false},
		{[]string{"--self-check=false"}, false, true},
		{[]string{"--gpu-canary=false", "--self-check=false"}, true, true},
	} {
		f, fs := bind()
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if c := f.Config(); c.SkipGPUCanary != tc.canary || c.SkipSelfCheck != tc.check {
			t.Errorf("%v: SkipGPUCanary %v, SkipSelfCheck %v; want %v, %v", tc.args, c.SkipGPUCanary, c.SkipSelfCheck, tc.canary, tc.check)
		}
	}
	for _, bad := range []string{"--gpu-canary=maybe", "--self-check=maybe"} {
		if _, fs := bind(); fs.Parse([]string{bad}) == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// TestHNSWCompressedFlag: --hnsw-compressed is off by default and reaches
// app.IndexConfig.HNSWCompressed for every command that opens an index
// (Bind and serve's BindCorpora share bindOpen).
func TestHNSWCompressedFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{{nil, false}, {[]string{"--hnsw-compressed"}, true}, {[]string{"--hnsw-compressed=false"}, false}} {
		for _, corpora := range []bool{false, true} {
			var f Index
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			if corpora {
				f.BindCorpora(fs)
			} else {
				f.Bind(fs)
			}
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			if got := f.Config().HNSWCompressed; got != tc.want {
				t.Errorf("%v (serve's --index: %v): HNSWCompressed %v, want %v", tc.args, corpora, got, tc.want)
			}
		}
	}
}
