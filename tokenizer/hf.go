package tokenizer

import (
	"encoding/json"
	"fmt"
)

// hfFile is the subset of tokenizer.json that the tokenizers read.
type hfFile struct {
	AddedTokens   []hfAddedToken   `json:"added_tokens"`
	Normalizer    *hfNormalizer    `json:"normalizer"`
	PreTokenizer  *hfPreTokenizer  `json:"pre_tokenizer"`
	PostProcessor *hfPostProcessor `json:"post_processor"`
	Padding       *struct {
		PadToken string `json:"pad_token"`
	} `json:"padding"`
	Model *hfModel `json:"model"`
}

// hfAddedToken is one entry of added_tokens.
type hfAddedToken struct {
	ID         int32  `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

// hfNormalizer: BertNormalizer's options (nil = absent), or NFC.
type hfNormalizer struct {
	Type               string `json:"type"`
	CleanText          *bool  `json:"clean_text"`
	HandleChineseChars *bool  `json:"handle_chinese_chars"`
	StripAccents       *bool  `json:"strip_accents"`
	Lowercase          *bool  `json:"lowercase"`
}

// hfPreTokenizer: BertPreTokenizer, ByteLevel, or a Sequence of them.
type hfPreTokenizer struct {
	Type          string `json:"type"`
	Pretokenizers []struct {
		Type    string `json:"type"`
		Pattern struct {
			Regex string `json:"Regex"`
		} `json:"pattern"`
		Behavior       string `json:"behavior"`
		Invert         bool   `json:"invert"`
		AddPrefixSpace bool   `json:"add_prefix_space"`
		UseRegex       bool   `json:"use_regex"`
	} `json:"pretokenizers"`
}

// hfPostProcessor: TemplateProcessing (single, special_tokens) or
// BertProcessing (sep, cls).
type hfPostProcessor struct {
	Type   string `json:"type"`
	Single []struct {
		SpecialToken *struct {
			ID string `json:"id"`
		} `json:"SpecialToken"`
		Sequence *struct {
			ID string `json:"id"`
		} `json:"Sequence"`
	} `json:"single"`
	SpecialTokens map[string]struct {
		IDs []int32 `json:"ids"`
	} `json:"special_tokens"`
	Sep []json.RawMessage `json:"sep"`
	Cls []json.RawMessage `json:"cls"`
}

// hfModel: WordPiece (unk_token, continuing_subword_prefix,
// max_input_chars_per_word) or BPE (merges and its options).
type hfModel struct {
	Type                    string           `json:"type"`
	Vocab                   map[string]int32 `json:"vocab"`
	UnkToken                string           `json:"unk_token"`
	ContinuingSubwordPrefix *string          `json:"continuing_subword_prefix"`
	MaxInputCharsPerWord    *int             `json:"max_input_chars_per_word"`
	Merges                  json.RawMessage  `json:"merges"`
	ByteFallback            bool             `json:"byte_fallback"`
	EndOfWordSuffix         string           `json:"end_of_word_suffix"`
	IgnoreMerges            bool             `json:"ignore_merges"`
	Dropout                 *float64         `json:"dropout"`
}

// parseHF decodes tokenizer.json bytes; a malformed file is returned as the
// error of sentinel (ErrBadTokenizer, ErrTokenizer) with json's message.
func parseHF(data []byte, sentinel error) (*hfFile, error) {
	var f hfFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%w: %v", sentinel, err)
	}
	return &f, nil
}

// hfErrorf returns a formatter of errors that wrap sentinel: the check
// failures of a tokenizer loader ("%w: "+format).
func hfErrorf(sentinel error) func(format string, args ...any) error {
	return func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{sentinel}, args...)...)
	}
}
