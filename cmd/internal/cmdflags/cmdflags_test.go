package cmdflags

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
		var f Index
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		f.Bind(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if got := f.Config().SkipGPUCanary; got != tc.skip {
			t.Errorf("%v: SkipGPUCanary %v, want %v", tc.args, got, tc.skip)
		}
	}
	var f Index
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.Bind(fs)
	if err := fs.Parse([]string{"--gpu-canary=maybe"}); err == nil {
		t.Error("--gpu-canary=maybe accepted")
	}
}

// TestSelfCheckFlag: --self-check is on unless turned off and reaches
// app.IndexConfig.SkipSelfCheck.
func TestSelfCheckFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		skip bool
	}{{nil, false}, {[]string{"--self-check"}, false}, {[]string{"--self-check=false"}, true}} {
		var f Index
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		f.Bind(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if got := f.Config().SkipSelfCheck; got != tc.skip {
			t.Errorf("%v: SkipSelfCheck %v, want %v", tc.args, got, tc.skip)
		}
	}
}
