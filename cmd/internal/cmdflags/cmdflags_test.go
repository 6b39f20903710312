package cmdflags

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/server/cache"
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

// TestHNSWCompressedFlag: --hnsw-compressed, --hnsw-int8 and
// --flat-int8-scan are off by default and reach app.IndexConfig's
// HNSWCompressed, HNSWInt8 and FlatInt8Scan for every command that opens an
// index (Bind and serve's BindCorpora share bindOpen).
func TestHNSWCompressedFlag(t *testing.T) {
	for _, tc := range []struct {
		args             []string
		want, scan, int8 bool
	}{{nil, false, false, false}, {[]string{"--hnsw-compressed"}, true, false, false}, {[]string{"--hnsw-compressed=false"}, false, false, false},
		{[]string{"--flat-int8-scan"}, false, true, false}, {[]string{"--flat-int8-scan", "--hnsw-compressed"}, true, true, false},
		{[]string{"--hnsw-int8"}, false, false, true}} {
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
			if got := f.Config().HNSWInt8; got != tc.int8 {
				t.Errorf("%v (serve's --index: %v): HNSWInt8 %v, want %v", tc.args, corpora, got, tc.int8)
			}
			if got := f.Config().FlatInt8Scan; got != tc.scan {
				t.Errorf("%v (serve's --index: %v): FlatInt8Scan %v, want %v", tc.args, corpora, got, tc.scan)
			}
		}
	}
}

// TestOffFlagsNoRemap: the serve flags of options that follow the
// convention (rlsearch.Off) reach app.Config unchanged: 0 stays 0 (the
// Config's default), "off" and -1 are rlsearch.Off, and the flag's
// default is the real default.
func TestOffFlagsNoRemap(t *testing.T) {
	for _, tc := range []struct {
		args                []string
		cache               int64
		inflight, judgeRetr int
	}{
		{nil, cache.DefaultMaxBytes, 0, 0},
		{[]string{"--cache-bytes", "0", "--max-inflight", "0", "--judge-retries", "0"}, 0, 0, 0},
		{[]string{"--cache-bytes", "off", "--max-inflight", "off", "--judge-retries", "off"}, rlsearch.Off, rlsearch.Off, rlsearch.Off},
		{[]string{"--cache-bytes=-1", "--max-inflight=-1", "--judge-retries=-1"}, -1, -1, -1},
		{[]string{"--cache-bytes", "1048576", "--max-inflight", "8", "--judge-retries", "2"}, 1 << 20, 8, 2},
	} {
		var s Serve
		var r Reward
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		s.Bind(fs)
		rfs := flag.NewFlagSet("reward", flag.ContinueOnError) // serve binds the reward flags beside its own elsewhere
		rfs.SetOutput(io.Discard)
		r.Bind(rfs)
		var serveArgs, rewardArgs []string
		for i := 0; i < len(tc.args); i++ {
			a := tc.args[i]
			dst := &serveArgs
			if strings.HasPrefix(a, "--judge-retries") {
				dst = &rewardArgs
			}
			*dst = append(*dst, a)
			if !strings.Contains(a, "=") {
				i++
				*dst = append(*dst, tc.args[i])
			}
		}
		if err := fs.Parse(serveArgs); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if err := rfs.Parse(rewardArgs); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if s.Cfg.CacheBytes != tc.cache || s.Cfg.Server.MaxInFlight != tc.inflight || r.O.Judge.MaxRetries != tc.judgeRetr {
			t.Errorf("%v: CacheBytes %d, MaxInFlight %d, Judge.MaxRetries %d; want %d, %d, %d (unchanged)", tc.args,
				s.Cfg.CacheBytes, s.Cfg.Server.MaxInFlight, r.O.Judge.MaxRetries, tc.cache, tc.inflight, tc.judgeRetr)
		}
	}
	var s Serve
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	s.Bind(fs)
	if fs.Parse([]string{"--cache-bytes", "lots"}) == nil {
		t.Error("--cache-bytes lots: accepted")
	}
	if got := fs.Lookup("cache-bytes").DefValue; got != "268435456" {
		t.Errorf("--cache-bytes default prints %q, want 268435456", got)
	}
}

// TestCheckDocsFlag: --check-docs reaches IndexConfig.CheckDocs; the old
// spelling --verify-docs (deprecated for one release) does too, printing
// one deprecation line.
func TestCheckDocsFlag(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		want       bool
		deprecated bool
	}{
		{nil, false, false},
		{[]string{"--check-docs"}, true, false},
		{[]string{"--check-docs=false"}, false, false},
		{[]string{"--verify-docs"}, true, true},
		{[]string{"--verify-docs=true"}, true, true},
		{[]string{"--verify-docs=false"}, false, true},
	} {
		var s Serve
		var out strings.Builder
		fs := flag.NewFlagSet("rlsearch serve", flag.ContinueOnError)
		fs.SetOutput(&out)
		s.Bind(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if got := s.Idx.Config().CheckDocs; got != tc.want {
			t.Errorf("%v: CheckDocs %v, want %v", tc.args, got, tc.want)
		}
		const line = `rlsearch: "--verify-docs" is deprecated, use "--check-docs"` + "\n"
		if want := map[bool]string{true: line}[tc.deprecated]; out.String() != want {
			t.Errorf("%v: output %q, want %q", tc.args, out.String(), want)
		}
	}
}
