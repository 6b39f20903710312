package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/internal/jsonbody"
)

// Profile chooses what a listener answers where two frameworks' clients
// send the same request and expect different replies (see ParseProfile).
// The zero Profile is ProfileSearchR1.
type Profile string

// Listener profiles.
const (
	// ProfileSearchR1 is the default: /retrieve answers Search-R1's
	// {"result": [[...]]} for {"queries"} and SkyRL's {"query"}, and
	// rLLM's {"results": [...]} for {"query", "top_k"}.
	ProfileSearchR1 Profile = "searchr1"
	// ProfileBrowseComp answers /retrieve {"query"} in BrowseComp-Plus's
	// flat shape {"result": [{"document": {"title", "text"}, "docid"}]},
	// Config.BrowseCompK hits (texttron/BrowseComp-Plus
	// searcher/search_r1_server.py, --k 5); its client can change only the
	// port.
	ProfileBrowseComp Profile = "browsecomp"
	// ProfileASearcher adds "url" to every document of /retrieve
	// (inclusionAI/ASearcher tools/search_utils.py reads r["url"] of each).
	ProfileASearcher Profile = "asearcher"
)

// Profiles lists the profiles ParseProfile accepts.
var Profiles = []Profile{ProfileSearchR1, ProfileBrowseComp, ProfileASearcher}

// ParseProfile returns the profile named s ("" = ProfileSearchR1), or an
// error listing the profiles.
func ParseProfile(s string) (Profile, error) {
	if s == "" {
		return ProfileSearchR1, nil
	}
	for _, p := range Profiles {
		if string(p) == s {
			return p, nil
		}
	}
	return "", fmt.Errorf("server: unknown profile %q (have %v)", s, Profiles)
}

type profileKey struct{}

func profileOf(ctx context.Context) Profile {
	if p, ok := ctx.Value(profileKey{}).(Profile); ok {
		return p
	}
	return ProfileSearchR1
}

// ProfileHandler returns the server's handler answering as profile p
// (Handler() for ProfileSearchR1). Safe for concurrent use.
func (s *Server) ProfileHandler(p Profile) http.Handler {
	if p == "" || p == ProfileSearchR1 {
		return s.handler
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.handler.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), profileKey{}, p)))
	})
}

// dialect is one framework's request and reply shape: the metrics label,
// how errors name it, and its fields.
type dialect struct {
	name   string // label of rlsearch_unanswered_requests_total
	title  string // in error messages
	fields []string
	known  map[string]string // folded field name → field (jsonbody.NearMiss)
}

func newDialect(name, title string, fields ...string) *dialect {
	d := &dialect{name: name, title: title, fields: fields, known: map[string]string{}}
	for _, f := range fields {
		d.known[jsonbody.Fold(f)] = f
	}
	return d
}

// The dialects, each with its upstream client (repository @ commit,
// file) whose request it decodes; integrations/tests mirror each client.
var (
	// Search-R1 (PeterGriffinJin/Search-R1 search_r1/search/retrieval_server.py), verl, slime, torchtitan, verl-tool, StepSearch's trainer.
	dSearchR1 = newDialect("searchr1", `Search-R1's /retrieve {"queries", "topk", "return_scores"}`, "queries", "topk", "return_scores", "retriever")
	// SkyRL (NovaSky-AI/SkyRL @ a956457 skyrl-gym/skyrl_gym/tools/search.py call_search_api).
	dSkyRL = newDialect("skyrl", `SkyRL's /retrieve {"query", "topk", "return_scores"}`, "query", "topk", "return_scores", "retriever")
	// GEM / ROLL (axon-rl/gem @ 4069f2f gem/tools/search_tool.py SearchTool._search): SkyRL's fields in MessagePack.
	dGEM = newDialect("gem", `GEM's MessagePack /retrieve {"query", "topk", "return_scores"}`, "query", "topk", "return_scores", "retriever")
	// rLLM (rllm-org/rllm @ 9beb6e0 examples/fully_async/deepresearch/tool.py LocalRetrievalTool.run; examples/search/local_retrieval_tool.py before 080fcfd).
	dRLLM = newDialect("rllm", `rLLM's /retrieve {"query", "top_k"}`, "query", "top_k", "k", "retriever")
	// BrowseComp-Plus (texttron/BrowseComp-Plus @ 97c637c search_agent/search_r1_client.py search).
	dBrowseComp = newDialect("browsecomp", `BrowseComp-Plus's /retrieve {"query"} (listener profile browsecomp: k fixed by the server)`, "query", "retriever")
	// ASearcher / AReaL / RLinf (inclusionAI/ASearcher @ 813e804 tools/search_utils.py AsyncSearchBrowserClient.query_async): Search-R1's request, documents with "url".
	dASearcher = newDialect("asearcher", `ASearcher's /retrieve {"queries", "topk", "return_scores"} (documents with "url")`, "queries", "topk", "return_scores", "retriever")
	// ASearcher's access_async: POST /access {"urls"}.
	dAccess = newDialect("asearcher", `ASearcher's /access {"urls"}`, "urls", "max_tokens", "max_bytes")
	// R1-Searcher (RUCAIBox/R1-Searcher @ 631167c evaluation/eval_search_loacl.py; train/wiki_corpus_load.py is its server).
	dR1 = newDialect("r1searcher", `R1-Searcher's /queries {"queries", "k"}`, "queries", "k", "retriever")
	// ReCall (Agent-RL/ReCall @ aaf16b3 data/prepare_musique_recall.py wikipedia_search; scripts/serving/retriever_serving.py /search).
	dReCall = newDialect("recall", `ReCall's /search {"query", "top_n", "return_score"}`, "query", "top_n", "return_score", "retriever")
	// ReCall's /batch_search (same server): "query" is a list.
	dReCallBatch = newDialect("recall", `ReCall's /batch_search {"query": [...], "top_n", "return_score"}`, "query", "top_n", "return_score", "retriever")
	// StepSearch (Zillwang/StepSearch @ 43215ba search_r1/search/retrieval_rerank_server.py /retrieve/rerank; search_r1/llm_agent/generation.py _batch_search).
	dStepSearch = newDialect("stepsearch", `StepSearch's /retrieve/rerank {"queries", "topk", "topk_retrieval", "return_scores"}`, "queries", "topk", "topk_retrieval", "return_scores", "retriever")
)

// fieldOwners names, for a field of some dialect, the dialects it belongs
// to: a key of another dialect is a 400 naming where it belongs, never a
// silent default.
var fieldOwners = map[string]string{
	"queries":        `Search-R1's /retrieve, R1-Searcher's /queries and StepSearch's /retrieve/rerank`,
	"query":          `SkyRL's, rLLM's, GEM's and BrowseComp-Plus's /retrieve and ReCall's /search`,
	"topk":           `Search-R1's, SkyRL's and GEM's /retrieve`,
	"top_k":          `rLLM's /retrieve`,
	"k":              `rLLM's /retrieve and R1-Searcher's /queries`,
	"top_n":          `ReCall's /search`,
	"return_scores":  `Search-R1's, SkyRL's and GEM's /retrieve`,
	"return_score":   `ReCall's /search`,
	"topk_retrieval": `StepSearch's /retrieve/rerank`,
	"urls":           `ASearcher's /access`,
}

// checkKeys refuses near-misses of d's fields (jsonbody.NearMiss: "TopK")
// and fields of other dialects; other unknown keys pass, as on Search-R1's
// /retrieve, whose clients send extras.
func (d *dialect) checkKeys(fields map[string]json.RawMessage) error {
	if err := jsonbody.NearMissError("", fields, d.known); err != nil {
		return err
	}
	return d.checkForeign(fields)
}

// checkForeign refuses fields of other dialects (checkKeys without the
// near-miss check, for /retrieve, which has its own).
func (d *dialect) checkForeign(fields map[string]json.RawMessage) error {
	var foreign []string
	for k := range fields {
		if _, ok := fieldOwners[k]; ok && !slices.Contains(d.fields, k) {
			foreign = append(foreign, k)
		}
	}
	if len(foreign) == 0 {
		return nil
	}
	slices.Sort(foreign)
	k := foreign[0]
	return rlsearch.BadField(k, "field %q belongs to %s, not to %s (fields: %s); send one dialect's fields per request",
		k, fieldOwners[k], d.title, strings.Join(d.fields, ", "))
}

// present reports whether key is in fields and not null (a JSON null
// counts as absent, as on /retrieve).
func present(fields map[string]json.RawMessage, key string) bool {
	raw, ok := fields[key]
	return ok && jsonbody.Kind(raw) != "null"
}

// fieldString decodes a required string field.
func fieldString(fields map[string]json.RawMessage, key string) (string, error) {
	raw, ok := fields[key]
	if !ok || jsonbody.Kind(raw) == "null" {
		return "", rlsearch.BadField(key, "missing required field %q (a string)", key)
	}
	if kind := jsonbody.Kind(raw); kind != "string" {
		return "", rlsearch.BadField(key, "%s must be a string, got %s", key, kind)
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", rlsearch.BadField(key, "%s: %v", key, err)
	}
	return v, nil
}

// fieldStrings decodes a required list of strings of at most max.
func fieldStrings(fields map[string]json.RawMessage, key string, max int) ([]string, error) {
	raw, ok := fields[key]
	if !ok || jsonbody.Kind(raw) == "null" {
		return nil, rlsearch.BadField(key, "missing required field %q (a list of strings)", key)
	}
	if kind := jsonbody.Kind(raw); kind != "list" {
		return nil, rlsearch.BadField(key, "%s must be a list of strings, got %s", key, kind)
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, rlsearch.BadField(key, "%s must be a list of strings: %v", key, err)
	}
	if len(elems) > max {
		return nil, rlsearch.TooLarge(key, "too many %s: %d > %d per request; split the batch", key, len(elems), max)
	}
	out := make([]string, len(elems))
	for i, e := range elems {
		if kind := jsonbody.Kind(e); kind != "string" {
			return nil, rlsearch.BadField(key, "%s[%d] must be a string, got %s", key, i, kind)
		}
		if err := json.Unmarshal(e, &out[i]); err != nil {
			return nil, rlsearch.BadField(key, "%s[%d]: %v", key, i, err)
		}
	}
	return out, nil
}

// fieldBool decodes an optional boolean (absent or null: def).
func fieldBool(fields map[string]json.RawMessage, key string, def bool) (bool, error) {
	raw, ok := fields[key]
	if !ok {
		return def, nil
	}
	switch kind := jsonbody.Kind(raw); kind {
	case "null":
		return def, nil
	case "bool":
		return raw[0] == 't', nil
	default:
		return false, rlsearch.BadField(key, "%s must be a boolean (true or false), got %s", key, kind)
	}
}

// fieldCount decodes an optional count in [0, max] (parseCount).
func fieldCount(fields map[string]json.RawMessage, key string, def, max int) (int, error) {
	return parseCount(key, fields[key], def, max)
}

// parseCount decodes the optional count raw of field key in [0, max] (an
// integral JSON number; 1.0 and 1e2 included, as Python clients may send
// floats); absent (empty raw), null or 0 mean def (Search-R1's `if not
// request.topk: request.topk = config.retrieval_topk`, rLLM's `top_k or
// self.max_results`).
func parseCount(key string, raw json.RawMessage, def, max int) (int, error) {
	if len(raw) == 0 || jsonbody.Kind(raw) == "null" {
		return def, nil
	}
	if kind := jsonbody.Kind(raw); kind != "number" {
		return 0, rlsearch.BadField(key, "%s must be an integer, got %s", key, kind)
	}
	text := strings.TrimSpace(string(raw))
	f, err := strconv.ParseFloat(text, 64)
	if (err != nil && !errors.Is(err, strconv.ErrRange)) || f != math.Trunc(f) {
		return 0, rlsearch.BadField(key, "%s must be an integer, got %s", key, text)
	}
	if f < 0 || f > float64(max) {
		return 0, rlsearch.BadField(key, "%s must be between 1 and %d (0 or absent means %d), got %s", key, max, def, text)
	}
	if f == 0 {
		return def, nil
	}
	return int(f), nil
}

// fieldRetriever decodes the optional "retriever" (our extension).
func (s *Server) fieldRetriever(fields map[string]json.RawMessage) (string, rlsearch.Retriever, error) {
	name := s.cfg.Default
	if present(fields, "retriever") {
		var err error
		if name, err = fieldString(fields, "retriever"); err != nil {
			return "", nil, rlsearch.BadField("retriever", "retriever must be a string, one of %s", strings.Join(s.names, ", "))
		}
	}
	return s.lookupRetriever(name)
}

// lookupRetriever returns the retriever called name, or the 400 of
// /retrieve naming what is served.
func (s *Server) lookupRetriever(name string) (string, rlsearch.Retriever, error) {
	r := s.cfg.Retrievers[name]
	if r == nil {
		if why, ok := s.cfg.Unserved[name]; ok {
			return "", nil, rlsearch.BadField("retriever", "retriever %q is not served: %s; available: %s", name, why, strings.Join(s.names, ", "))
		}
		return "", nil, rlsearch.BadField("retriever", "unknown retriever %q; available: %s", name, strings.Join(s.names, ", "))
	}
	return name, r, nil
}
