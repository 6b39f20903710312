package inspect

import (
	"bufio"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/rlsearch/rlsearch/internal/atomicfile"
	"github.com/rlsearch/rlsearch/sdk"
)

// ReportConfig configures WriteReport.
type ReportConfig struct {
	// Load configures reading the dump (progress, workers, line limit);
	// OnRollout and Prepare are WriteReport's.
	Load LoadConfig
	// Tracer, when set, replays every program of every rollout and embeds
	// the calls with their candidates (Tracer.Trace).
	Tracer *Tracer
	// Generated is shown in the page header ("" = the time, UTC).
	Generated string
}

// reportConfig is the report's rl-config block.
type reportConfig struct {
	Live      bool         `json:"live"`
	Chunk     int          `json:"chunk"` // rollouts per rl-details-N block
	Dump      string       `json:"dump"`
	Generated string       `json:"generated"`
	Trace     bool         `json:"trace"`
	Budgets   *sdk.Budgets `json:"budgets,omitempty"`
}

// WriteReport reads the dump at dumpPath and writes the inspector's view of
// it to out as one self-contained HTML file: the page's script and style
// inline (allowed by a Content-Security-Policy with their SHA-256 hashes
// and nothing else, so the page can load nothing and send nothing), the
// summary and rows as JSON, and every rollout as JSON text the page
// inflates and parses only when that rollout is opened (blocks of 1,000
// rollouts, gzip then base64: the page needs the browser's
// DecompressionStream, in Chromium 80+, Firefox 113+, Safari 16.4+). The file is written atomically
// (internal/atomicfile); the rollouts pass through a temporary file beside
// it. It returns the summary. Errors: the dump's, the output's, ctx's.
func WriteReport(ctx context.Context, out, dumpPath string, an *Analyzer, cfg ReportConfig) (*Summary, error) {
	tmp, err := os.CreateTemp(filepath.Dir(out), ".inspect-rollouts-*.tmp")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	bw := bufio.NewWriterSize(tmp, 1<<20)
	var offsets []int64 // (offset in its chunk, length) pairs, in characters of the ASCII JSON
	var chunks []int64  // byte offset of each chunk in tmp
	var pos, chunkStart int64
	lc := cfg.Load
	lc.OnRollout = func(r *Rollout) error {
		if r.Index%detailChunk == 0 {
			chunks, chunkStart = append(chunks, pos), pos
		}
		b, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("inspect: encode rollout %d: %w", r.Index, err)
		}
		b = asciiJSON(b)
		if _, err := bw.Write(b); err != nil {
			return err
		}
		offsets = append(offsets, pos-chunkStart, int64(len(b)))
		pos += int64(len(b))
		return nil
	}
	if cfg.Tracer != nil {
		lc.Prepare = func(ctx context.Context, r *Rollout) error {
			if err := cfg.Tracer.Trace(ctx, r); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				r.TraceError = err.Error()
			}
			return nil
		}
	}
	d, err := LoadDump(ctx, dumpPath, an, lc)
	if err != nil {
		return nil, err
	}
	if err := bw.Flush(); err != nil {
		return nil, err
	}
	rows, _ := d.Rows()
	sum, _ := d.Summary()
	rc := reportConfig{Dump: d.Name, Generated: cfg.Generated, Trace: cfg.Tracer != nil, Chunk: detailChunk}
	if rc.Generated == "" {
		rc.Generated = "generated " + time.Now().UTC().Format("2006-01-02 15:04 UTC")
	}
	if cfg.Tracer != nil {
		b := cfg.Tracer.Budgets()
		rc.Budgets = &b
	}
	err = atomicfile.WriteFile(out, 0o644, func(w io.Writer) error {
		return writeHTML(w, d.Name, rc, sum, rows, tmp, append(chunks, pos), offsets)
	})
	if err != nil {
		return nil, err
	}
	return sum, nil
}

// detailChunk is the number of rollouts per details block of a report:
// one JavaScript string holds at most about 512 MiB (V8's limit), so a
// large report's rollouts are split into blocks the page reads one at a
// time.
const detailChunk = 1000

// scriptHash is a CSP source for an inline element's exact text.
func scriptHash(text []byte) string {
	h := sha256.Sum256(text)
	return "'sha256-" + base64.StdEncoding.EncodeToString(h[:]) + "'"
}

// ReportCSP is the Content-Security-Policy of a report: the inline script
// and style by hash, images only as data: URLs, nothing else (no fetch,
// no form, no frame, no other script).
func ReportCSP() string {
	return "default-src 'none'; script-src " + scriptHash(asset("app.js")) + "; style-src " + scriptHash(asset("app.css")) +
		"; img-src data:; base-uri 'none'; form-action 'none'"
}

func writeHTML(w io.Writer, name string, rc reportConfig, sum *Summary, rows []Row, details *os.File, chunks, offsets []int64) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	block := func(id string, v any) {
		b, err := json.Marshal(v) // escapes <, > and &: no "</script" inside
		if err != nil {
			panic(err) // rows and summaries hold strings and finite numbers only
		}
		fmt.Fprintf(bw, "<script type=\"application/json\" id=%q>", id)
		bw.Write(asciiJSON(b))
		bw.WriteString("</script>\n")
	}
	fmt.Fprintf(bw, "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"+
		"<meta http-equiv=\"Content-Security-Policy\" content=\"%s\">\n"+
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>rlsearch inspector: %s</title>\n<style>",
		html.EscapeString(ReportCSP()), html.EscapeString(name))
	bw.Write(asset("app.css"))
	bw.WriteString("</style>\n</head>\n<body>\n<header id=\"bar\"><span class=\"brand\">rlsearch inspector</span><span id=\"where\"></span></header>\n" +
		"<main id=\"app\"><p class=\"muted\">Loading…</p></main>\n")
	block("rl-config", rc)
	block("rl-summary", sum)
	block("rl-rows", rows)
	bw.WriteString("<script>")
	bw.Write(asset("app.js"))
	bw.WriteString("</script>\n")
	if _, err := details.Seek(0, io.SeekStart); err != nil {
		return err
	}
	for c := 0; c+1 < len(chunks); c++ {
		// gzip, then base64: the page inflates a block with the browser's
		// DecompressionStream when one of its rollouts is opened.
		fmt.Fprintf(bw, "<script type=\"text/plain\" id=\"rl-details-%d\">", c)
		b64 := base64.NewEncoder(base64.StdEncoding, bw)
		zw, _ := gzip.NewWriterLevel(b64, gzip.BestSpeed) // a valid level: no error
		if _, err := io.CopyN(zw, details, chunks[c+1]-chunks[c]); err != nil {
			return err
		}
		if err := zw.Close(); err != nil {
			return err
		}
		if err := b64.Close(); err != nil {
			return err
		}
		bw.WriteString("</script>\n")
	}
	block("rl-offsets", offsets)
	bw.WriteString("</body>\n</html>\n")
	return bw.Flush()
}

// asciiJSON rewrites the non-ASCII characters of JSON text b (which occur
// only inside strings) as \u escapes, UTF-16 surrogate pairs above
// U+FFFF, so that byte offsets into the text are JavaScript string
// offsets. Invalid UTF-8 becomes U+FFFD (json.Marshal never writes any).
func asciiJSON(b []byte) []byte {
	n := 0
	for _, c := range b {
		if c >= utf8.RuneSelf {
			n++
		}
	}
	if n == 0 {
		return b
	}
	out := make([]byte, 0, len(b)+4*n)
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			out = append(out, b[i])
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		i += size
		if r > 0xFFFF {
			r -= 0x10000
			out = appendU(appendU(out, 0xD800+(r>>10)), 0xDC00+(r&0x3FF))
			continue
		}
		out = appendU(out, r)
	}
	return out
}

func appendU(b []byte, r rune) []byte {
	s := strconv.FormatInt(int64(r), 16)
	b = append(b, `\u`...)
	for range 4 - len(s) {
		b = append(b, '0')
	}
	return append(b, s...)
}
