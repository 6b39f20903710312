package app

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/rlsearch/rlsearch/ann"
	"github.com/rlsearch/rlsearch/embed"
	"github.com/rlsearch/rlsearch/index"
)

// Fingerprint identifies what produces a server's answers: the index build,
// the query encoder's configuration, the dense backend and its parameters
// and the reranker. Two servers with equal fingerprints answer every
// request with the same bytes (the determinism contract, server/README.md);
// a trainer logs it beside each observation.
type Fingerprint struct {
	// BuildID is index.Index.BuildID (16 hex digits).
	BuildID string `json:"build_id"`
	// Encoder is embed.ConfigHash of the served query encoder's directory
	// (16 hex digits), "none" without --model.
	Encoder string `json:"encoder"`
	// Dense is the dense backend ann.Open chose ("flat", "hnsw", "gpu",
	// "none") with its answer-changing parameters (HNSW: ef_search, m,
	// int8, and rerank=fp16 for a compressed graph, --hnsw-compressed,
	// whose scores are q·fp16(x); flat: int8scan=k+N with
	// --flat-int8-scan, whose hits may differ from exact search's).
	Dense string `json:"dense"`
	// Reranker is the reranker model's name, "none" without --reranker.
	Reranker string `json:"reranker"`
	// ID is the first 16 hex digits of SHA-256 over String(): the key of a
	// result-cache file (rlsearch serve --cache-load).
	ID string `json:"id"`
}

// String is the fingerprint as the X-Rlsearch-Fingerprint header carries
// it: "id=… build=… encoder=… dense=… reranker=…" (ASCII, no commas
// inside values).
func (f Fingerprint) String() string {
	return fmt.Sprintf("id=%s %s", f.ID, f.body())
}

func (f Fingerprint) body() string {
	return fmt.Sprintf("build=%s encoder=%s dense=%s reranker=%s", f.BuildID, f.Encoder, f.Dense, headerSafe(f.Reranker))
}

// headerSafe keeps printable ASCII other than space (a model directory's
// name may hold anything).
func headerSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r <= ' ' || r > '~' {
			return '_'
		}
		return r
	}, s)
}

// NewFingerprint describes a server over ix (encoder configuration model,
// reranker name rerankerName, "" for none). Errors: embed.ConfigHash's.
func NewFingerprint(ix *index.Index, model embed.Config, rerankerName string) (Fingerprint, error) {
	f := Fingerprint{BuildID: ix.BuildID(), Encoder: "none", Dense: "none", Reranker: "none"}
	if model.Dir != "" && ix.Encoder() != nil {
		h, err := embed.ConfigHash(model.Dir)
		if err != nil {
			return Fingerprint{}, err
		}
		f.Encoder = fmt.Sprintf("%016x", h)
	}
	if ds := ix.DenseSearch; ds != nil && ix.Encoder() != nil {
		f.Dense = ds.Backend
		if h, ok := ds.Index.(*ann.HNSW); ok {
			c := h.Config()
			rr := ""
			if h.Compressed() {
				rr = ",rerank=fp16"
			}
			f.Dense += fmt.Sprintf("(ef_search=%d,m=%d,int8=%v%s)", c.EfSearch, c.M, c.Int8, rr)
		}
		if fl, ok := ds.Index.(*ann.Flat); ok {
			if on, extra := fl.Int8Scanned(); on {
				f.Dense += fmt.Sprintf("(int8scan=k+%d)", extra)
			}
		}
	}
	if rerankerName != "" {
		f.Reranker = rerankerName
	}
	sum := sha256.Sum256([]byte(f.body()))
	f.ID = hex.EncodeToString(sum[:8])
	return f, nil
}
