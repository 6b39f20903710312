package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rlsearch/rlsearch/bench"
)

// Files lists what WriteDir wrote, relative to its directory.
type Files struct {
	JSON, Markdown string
	Plots          []string
}

// WriteDir writes rep into dir (created): report.json, plots/*.png and
// *.svg, and report.md that embeds the PNGs. Every file is written
// atomically (temporary file and rename), report.md last.
func WriteDir(dir string, rep *bench.Report) (Files, error) {
	var f Files
	plotDir := filepath.Join(dir, "plots")
	if err := os.MkdirAll(plotDir, 0o755); err != nil {
		return f, err
	}
	f.JSON = "report.json"
	if err := rep.WriteJSON(filepath.Join(dir, f.JSON)); err != nil {
		return f, err
	}
	plots, err := Plots(rep)
	if err != nil {
		return f, err
	}
	bySuite, err := WritePlots(plotDir, plots)
	if err != nil {
		return f, err
	}
	for _, p := range plots {
		f.Plots = append(f.Plots, filepath.Join("plots", p.Name+".png"), filepath.Join("plots", p.Name+".svg"))
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, rep, bySuite); err != nil {
		return f, err
	}
	f.Markdown = "report.md"
	if err := bench.WriteFileAtomic(filepath.Join(dir, f.Markdown), md.Bytes()); err != nil {
		return f, fmt.Errorf("write report.md: %w", err)
	}
	return f, nil
}
