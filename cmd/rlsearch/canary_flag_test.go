package main

import (
	"flag"
	"io"
	"testing"
)

// TestSkipFlags: --gpu-canary and --self-check are on unless turned off
// (like --model-canary) and reach app.IndexConfig.SkipGPUCanary and
// SkipSelfCheck; a value that is not a boolean is refused.
func TestSkipFlags(t *testing.T) {
	parse := func(args ...string) (indexFlags, error) {
		var f indexFlags
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		f.bind(fs)
		return f, fs.Parse(args)
	}
	for _, tc := range []struct {
		name string
		get  func(indexFlags) bool
	}{
		{"gpu-canary", func(f indexFlags) bool { return f.config().SkipGPUCanary }},
		{"self-check", func(f indexFlags) bool { return f.config().SkipSelfCheck }},
	} {
		for _, c := range []struct {
			args []string
			skip bool
		}{{nil, false}, {[]string{"--" + tc.name}, false}, {[]string{"--" + tc.name + "=true"}, false}, {[]string{"--" + tc.name + "=false"}, true}} {
			f, err := parse(c.args...)
			if err != nil {
				t.Fatal(err)
			}
			if got := tc.get(f); got != c.skip {
				t.Errorf("%v: skip %v, want %v", c.args, got, c.skip)
			}
		}
		if _, err := parse("--" + tc.name + "=maybe"); err == nil {
			t.Errorf("--%s=maybe accepted", tc.name)
		}
	}
}
