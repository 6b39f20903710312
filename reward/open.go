package reward

import "errors"

// ErrConfig is matched (errors.Is) by the error of Open when the scoring
// configuration is invalid, as opposed to a file or judge that could not
// be opened. The error's text is the validation error's.
var ErrConfig = errors.New("reward: bad configuration")

// Options configure Open: a scoring Config plus the files and the judge
// endpoint it loads, as `rlsearch reward` and `rlsearch serve` take them.
type Options struct {
	// Config is the scoring configuration. Open sets SearchP1.References
	// when References is set and SearchP1.Judge when Judge.BaseURL is set.
	Config
	// References is a Search-P1 reference-plan cache, JSONL {"qid",
	// "plan": [str]} (see LoadReferences); "" = none.
	References string
	// Judge is the OpenAI-compatible Search-P1 judge; BaseURL "" means
	// the lexical judge (LexicalJudge).
	Judge OpenAIConfig
	// JudgeCache is the judgement cache file (see OpenJudgeCache; "" =
	// memory only). Used only with an LLM judge.
	JudgeCache string
}

// Open loads what o names and returns the Scorer, with the judge cache
// (nil without an LLM judge) whose Save the caller runs after each batch.
// Errors: the reference file's (ErrBadReferences), the judge's
// configuration, the cache file's, or an invalid Config (ErrConfig).
func Open(o Options) (*Scorer, *JudgeCache, error) {
	cfg := o.Config
	if o.References != "" {
		refs, err := LoadReferences(o.References)
		if err != nil {
			return nil, nil, err
		}
		cfg.SearchP1.References = refs
	}
	var cache *JudgeCache
	if o.Judge.BaseURL != "" {
		j, err := NewOpenAIJudge(o.Judge)
		if err != nil {
			return nil, nil, err
		}
		if cache, err = OpenJudgeCache(o.JudgeCache); err != nil {
			return nil, nil, err
		}
		cfg.SearchP1.Judge = CachedJudge{Inner: j, Cache: cache}
	}
	s, err := New(cfg)
	if err != nil {
		return nil, nil, configError{err}
	}
	return s, cache, nil
}

type configError struct{ error }

func (configError) Is(target error) bool { return target == ErrConfig }
func (e configError) Unwrap() error      { return e.error }
