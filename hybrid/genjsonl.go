package hybrid

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/rlsearch/rlsearch/internal/jsonl"
)

// GenerateJSONL generates instances on c (Generate), gives each the
// natural-language query of v (step iv; nil keeps none) and writes them to
// out, one JSON Instance per line. It returns Generate's statistics.
// Nothing is written when generation or a verbalization fails; the error
// of a verbalization names the instance.
func GenerateJSONL(ctx context.Context, c *Collection, cfg GenConfig, v Verbalizer, out io.Writer) (GenStats, error) {
	insts, st, err := Generate(ctx, c, cfg)
	if err != nil {
		return st, err
	}
	for i := range insts {
		if v == nil {
			break
		}
		q, err := v.Verbalize(ctx, c.Schema(), &insts[i])
		if err != nil {
			return st, fmt.Errorf("verbalize %s: %w", insts[i].ID, err)
		}
		insts[i].Query = q
	}
	w := jsonl.NewWriter(out)
	for _, in := range insts {
		if err := w.Write(in); err != nil {
			return st, err
		}
	}
	return st, w.Flush()
}

// IndexSummary lists m's field indexes as "field:kind(count)", sorted by
// field and separated by spaces, as `rlsearch hybrid build` prints them.
func (m *Meta) IndexSummary() string {
	var idx []string
	for name, im := range m.Indexes {
		idx = append(idx, fmt.Sprintf("%s:%s(%d)", name, im.Kind, im.Count))
	}
	sort.Strings(idx)
	return strings.Join(idx, " ")
}
