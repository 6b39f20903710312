package index

import "fmt"

// Summary is a one-line report of the build that wrote m into dir:
// passages, empty ones skipped, build time and rate, BM25 terms and, when
// there is a vector file, its model, dimension and storage type.
func (m *Meta) Summary(dir string) string {
	s := fmt.Sprintf("indexed %d passages (%d empty skipped) into %s in %.1fs (%.0f passages/s); BM25 %d terms",
		m.NumDocs, m.Skipped, dir, m.BuildSeconds, float64(m.NumDocs)/m.BuildSeconds, m.BM25.NumTerms)
	if m.Dense != nil {
		s += fmt.Sprintf("; dense %s %d-d %s", m.Dense.Model, m.Dense.Dim, m.Dense.DType)
	}
	return s
}
