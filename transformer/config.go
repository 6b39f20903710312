package transformer

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ConfigFile is the Hugging Face model configuration beside the weights
// (save_pretrained and optimum's ONNX export both write it).
const ConfigFile = "config.json"

// Model types (config.json "model_type").
const (
	TypeBert  = "bert"
	TypeQwen3 = "qwen3"
)

// ErrConfig marks a config.json this package cannot run: missing, malformed,
// or asking for a variant the forward passes do not implement (they say
// which field).
var ErrConfig = errors.New("transformer: unsupported model config")

// Config is the part of config.json the forward passes need. Exactly one
// of Bert and Qwen3 is set, by ModelType.
type Config struct {
	ModelType string
	Bert      *BertConfig
	Qwen3     *Qwen3Config
}

// BertConfig is a BertModel's shape (transformers BertConfig field names
// in the json tags; E5 models are BertModel checkpoints).
type BertConfig struct {
	VocabSize    int     `json:"vocab_size"`
	Hidden       int     `json:"hidden_size"`
	Layers       int     `json:"num_hidden_layers"`
	Heads        int     `json:"num_attention_heads"`
	Intermediate int     `json:"intermediate_size"`
	MaxPositions int     `json:"max_position_embeddings"`
	TypeVocab    int     `json:"type_vocab_size"`
	LayerNormEps float64 `json:"layer_norm_eps"`
	HiddenAct    string  `json:"hidden_act"`
	PositionType string  `json:"position_embedding_type"`
}

// HeadDim is Hidden / Heads.
func (c BertConfig) HeadDim() int { return c.Hidden / c.Heads }

// Qwen3Config is a Qwen3ForCausalLM's shape (transformers Qwen3Config).
type Qwen3Config struct {
	VocabSize         int     `json:"vocab_size"`
	Hidden            int     `json:"hidden_size"`
	Layers            int     `json:"num_hidden_layers"`
	Heads             int     `json:"num_attention_heads"`
	KVHeads           int     `json:"num_key_value_heads"`
	HeadDim           int     `json:"head_dim"`
	Intermediate      int     `json:"intermediate_size"`
	RMSNormEps        float64 `json:"rms_norm_eps"`
	RopeTheta         float64 `json:"rope_theta"`
	TieWordEmbeddings bool    `json:"tie_word_embeddings"`
}

// LoadConfig reads dir/config.json. Errors wrap ErrConfig and name the
// field; a missing file is an error wrapping fs.ErrNotExist and ErrConfig.
func LoadConfig(dir string) (*Config, error) {
	path := filepath.Join(dir, ConfigFile)
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w (Hugging Face's config.json must sit beside the weights; save_pretrained and optimum write it)", ErrConfig, err)
	}
	return ParseConfig(raw, path)
}

// ParseConfig parses config.json bytes; name appears in errors.
func ParseConfig(raw []byte, name string) (*Config, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrConfig, name, err)
	}
	var mt string
	if r, ok := m["model_type"]; ok {
		json.Unmarshal(r, &mt)
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: "+format, append([]any{ErrConfig, name}, args...)...)
	}
	str := func(key string) string {
		var s string
		if r, ok := m[key]; ok {
			json.Unmarshal(r, &s)
		}
		return s
	}
	isTrue := func(key string) bool {
		var b bool
		if r, ok := m[key]; ok {
			json.Unmarshal(r, &b)
		}
		return b
	}
	isNull := func(key string) bool {
		r, ok := m[key]
		return !ok || string(r) == "null"
	}
	switch mt {
	case TypeBert:
		c := BertConfig{MaxPositions: 512, TypeVocab: 2, LayerNormEps: 1e-12, HiddenAct: "gelu", PositionType: "absolute"}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, bad("%v", err)
		}
		switch {
		case c.VocabSize < 1 || c.Hidden < 1 || c.Layers < 1 || c.Heads < 1 || c.Intermediate < 1 || c.MaxPositions < 1:
			return nil, bad("vocab_size, hidden_size, num_hidden_layers, num_attention_heads, intermediate_size, max_position_embeddings must be positive (%+v)", c)
		case c.Hidden%c.Heads != 0:
			return nil, bad("hidden_size %d is not a multiple of num_attention_heads %d", c.Hidden, c.Heads)
		case c.HiddenAct != "gelu":
			return nil, bad("hidden_act %q: only \"gelu\" (exact erf GELU, BERT and E5) is implemented", c.HiddenAct)
		case c.PositionType != "absolute":
			return nil, bad("position_embedding_type %q: only \"absolute\" is implemented", c.PositionType)
		case !(c.LayerNormEps > 0):
			return nil, bad("layer_norm_eps %v must be positive", c.LayerNormEps)
		}
		return &Config{ModelType: mt, Bert: &c}, nil
	case TypeQwen3:
		c := Qwen3Config{RMSNormEps: 1e-6, RopeTheta: 10000} // transformers Qwen3Config defaults
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, bad("%v", err)
		}
		// transformers ≥ 5 writes rope_parameters {"rope_theta", "rope_type"} instead of rope_theta / rope_scaling.
		if r, ok := m["rope_parameters"]; ok && string(r) != "null" {
			var rp struct {
				Theta float64 `json:"rope_theta"`
				Type  string  `json:"rope_type"`
			}
			if err := json.Unmarshal(r, &rp); err != nil {
				return nil, bad("rope_parameters: %v", err)
			}
			if rp.Type != "" && rp.Type != "default" {
				return nil, bad("rope_parameters.rope_type %q: only the default RoPE is implemented", rp.Type)
			}
			if rp.Theta > 0 {
				c.RopeTheta = rp.Theta
			}
		}
		if c.KVHeads == 0 {
			c.KVHeads = c.Heads
		}
		if c.HeadDim == 0 && c.Heads > 0 {
			c.HeadDim = c.Hidden / c.Heads
		}
		var layerTypes []string
		if r, ok := m["layer_types"]; ok {
			json.Unmarshal(r, &layerTypes)
		}
		for i, lt := range layerTypes {
			if lt != "full_attention" {
				return nil, bad("layer_types[%d] %q: only full attention is implemented", i, lt)
			}
		}
		switch {
		case c.VocabSize < 1 || c.Hidden < 1 || c.Layers < 1 || c.Heads < 1 || c.KVHeads < 1 || c.Intermediate < 1 || c.HeadDim < 2:
			return nil, bad("vocab_size, hidden_size, num_hidden_layers, num_attention_heads, num_key_value_heads, head_dim, intermediate_size must be positive (%+v)", c)
		case c.Heads%c.KVHeads != 0:
			return nil, bad("num_attention_heads %d is not a multiple of num_key_value_heads %d", c.Heads, c.KVHeads)
		case c.HeadDim%2 != 0:
			return nil, bad("head_dim %d must be even (rotary embedding)", c.HeadDim)
		case str("hidden_act") != "" && str("hidden_act") != "silu":
			return nil, bad("hidden_act %q: only \"silu\" (SwiGLU) is implemented", str("hidden_act"))
		case isTrue("attention_bias"):
			return nil, bad("attention_bias true: Qwen3 checkpoints have none and the forward pass adds none")
		case isTrue("use_sliding_window"):
			return nil, bad("use_sliding_window true: only full attention is implemented")
		case !isNull("rope_scaling"):
			return nil, bad("rope_scaling %s: only the default RoPE is implemented", m["rope_scaling"])
		case !(c.RMSNormEps > 0) || !(c.RopeTheta > 0):
			return nil, bad("rms_norm_eps %v and rope_theta %v must be positive", c.RMSNormEps, c.RopeTheta)
		}
		return &Config{ModelType: mt, Qwen3: &c}, nil
	}
	return nil, bad("model_type %q (supported: %q for E5/BERT encoders, %q for Qwen3-Reranker)", mt, TypeBert, TypeQwen3)
}
