package transformer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ONNXFile is the ONNX export the CPU path (ONNX Runtime) runs; its
// initializers are read when no safetensors file is present.
const ONNXFile = "model.onnx"

// ErrWeights marks weights that cannot be read or do not match config.json
// (missing tensors, wrong shapes, unreadable files); the message names them.
var ErrWeights = errors.New("transformer: bad weights")

// Weights are a model's tensors under their Hugging Face state-dict names
// (BertModel: "encoder.layer.0.attention.self.query.weight", ...;
// Qwen3ForCausalLM: "model.layers.0.self_attn.q_proj.weight", ...), read
// from safetensors or from an ONNX export's initializers. Tensor data is
// mapped read-only from the files and valid until Close. Safe for
// concurrent reads; Close is not concurrent with use.
type Weights struct {
	Format  string // "safetensors" or "onnx"
	Source  string // the file read (the first shard)
	tensors map[string]*Tensor
	closers []func() error
}

// Tensor returns the tensor of a state-dict name.
func (w *Weights) Tensor(name string) (*Tensor, bool) {
	t, ok := w.tensors[name]
	return t, ok
}

// Names lists the tensor names, sorted.
func (w *Weights) Names() []string {
	out := make([]string, 0, len(w.tensors))
	for n := range w.tensors {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Close unmaps the files. Tensors are invalid afterwards. Idempotent.
func (w *Weights) Close() error {
	var errs []error
	for _, c := range w.closers {
		errs = append(errs, c())
	}
	w.closers = nil
	return errors.Join(errs...)
}

// LoadWeights reads the weights of the model directory dir for cfg:
// model.safetensors (or its shards, model.safetensors.index.json) when
// present, else the initializers of model.onnx. Either way the tensors
// come out under their Hugging Face names and logical shapes (see
// resolveONNX for how ONNX initializers are matched to them) and are
// checked against cfg: every tensor the forward pass needs must exist with
// the shape config.json implies. Errors wrap ErrWeights (or an fs error).
// The caller must Close the Weights.
func LoadWeights(dir string, cfg *Config) (*Weights, error) { return LoadWeightsFormat(dir, cfg, "") }

// LoadModel is LoadConfig then LoadWeights over dir. The caller must Close
// the Weights.
func LoadModel(dir string) (*Config, *Weights, error) {
	cfg, err := LoadConfig(dir)
	if err != nil {
		return nil, nil, err
	}
	w, err := LoadWeights(dir, cfg)
	if err != nil {
		return nil, nil, err
	}
	return cfg, w, nil
}

// LoadReference is LoadModel for the float32 Go reference that stands in
// when ONNX Runtime cannot serve a CPU reference (why says why not, and
// the errors name it): config.json must be model_type want (TypeBert or
// TypeQwen3). The caller must Close the Weights.
func LoadReference(dir, want string, why error) (*Config, *Weights, error) {
	cfg, err := LoadConfig(dir)
	if err != nil {
		return nil, nil, errors.Join(fmt.Errorf("no ONNX Runtime reference (%v)", why), err)
	}
	if (want == TypeBert && cfg.Bert == nil) || (want == TypeQwen3 && cfg.Qwen3 == nil) {
		return nil, nil, fmt.Errorf("no ONNX Runtime reference (%v), and config.json is model_type %q, not %s", why, cfg.ModelType, want)
	}
	w, err := LoadWeights(dir, cfg)
	if err != nil {
		return nil, nil, err
	}
	return cfg, w, nil
}

// LoadWeightsFormat is LoadWeights reading only format "safetensors" or
// "onnx" ("" chooses as LoadWeights does).
func LoadWeightsFormat(dir string, cfg *Config, format string) (*Weights, error) {
	var w *Weights
	var err error
	_, errST := os.Stat(filepath.Join(dir, SafetensorsFile))
	_, errIdx := os.Stat(filepath.Join(dir, SafetensorsIndex))
	switch {
	case format != "" && format != "onnx" && format != "safetensors":
		return nil, fmt.Errorf("transformer: weight format %q (want onnx or safetensors)", format)
	case format == "safetensors" || (format == "" && (errST == nil || errIdx == nil)):
		w, err = loadSafetensors(dir)
		if err == nil {
			normalizeNames(w, cfg)
		}
	default:
		if _, err := os.Stat(filepath.Join(dir, ONNXFile)); err != nil {
			return nil, fmt.Errorf("%w: %s holds neither %s nor %s", ErrWeights, dir, SafetensorsFile, ONNXFile)
		}
		w, err = loadONNX(dir, cfg)
	}
	if err != nil {
		return nil, err
	}
	if err := checkShapes(w, cfg); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// bertSlots are the per-layer tensors of a BertModel layer, in forward order.
var bertSlots = []string{
	"attention.self.query.weight", "attention.self.query.bias",
	"attention.self.key.weight", "attention.self.key.bias",
	"attention.self.value.weight", "attention.self.value.bias",
	"attention.output.dense.weight", "attention.output.dense.bias",
	"attention.output.LayerNorm.weight", "attention.output.LayerNorm.bias",
	"intermediate.dense.weight", "intermediate.dense.bias",
	"output.dense.weight", "output.dense.bias",
	"output.LayerNorm.weight", "output.LayerNorm.bias",
}

// qwen3Linear are the per-layer projections of a Qwen3 decoder layer in
// forward order (Qwen3Attention: q, k, v, o; Qwen3MLP: down(act(gate(x)) · up(x))).
var qwen3Linear = []string{
	"self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight", "self_attn.o_proj.weight",
	"mlp.gate_proj.weight", "mlp.up_proj.weight", "mlp.down_proj.weight",
}

// expected returns every tensor name the forward pass of cfg reads, with
// its logical shape (lm_head.weight only for untied Qwen3 heads).
func expected(cfg *Config) (names []string, shapes map[string][]int) {
	shapes = map[string][]int{}
	add := func(name string, shape ...int) {
		names = append(names, name)
		shapes[name] = shape
	}
	if c := cfg.Bert; c != nil {
		h, in := c.Hidden, c.Intermediate
		add("embeddings.word_embeddings.weight", c.VocabSize, h)
		add("embeddings.position_embeddings.weight", c.MaxPositions, h)
		add("embeddings.token_type_embeddings.weight", c.TypeVocab, h)
		add("embeddings.LayerNorm.weight", h)
		add("embeddings.LayerNorm.bias", h)
		for l := 0; l < c.Layers; l++ {
			p := fmt.Sprintf("encoder.layer.%d.", l)
			for _, s := range bertSlots {
				switch s {
				case "intermediate.dense.weight":
					add(p+s, in, h)
				case "intermediate.dense.bias":
					add(p+s, in)
				case "output.dense.weight":
					add(p+s, h, in)
				default:
					if strings.HasSuffix(s, ".weight") && !strings.Contains(s, "LayerNorm") {
						add(p+s, h, h)
					} else {
						add(p+s, h)
					}
				}
			}
		}
		return names, shapes
	}
	c := cfg.Qwen3
	h, q, kv := c.Hidden, c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	add("model.embed_tokens.weight", c.VocabSize, h)
	for l := 0; l < c.Layers; l++ {
		p := fmt.Sprintf("model.layers.%d.", l)
		add(p+"input_layernorm.weight", h)
		add(p+"self_attn.q_proj.weight", q, h)
		add(p+"self_attn.k_proj.weight", kv, h)
		add(p+"self_attn.v_proj.weight", kv, h)
		add(p+"self_attn.q_norm.weight", c.HeadDim)
		add(p+"self_attn.k_norm.weight", c.HeadDim)
		add(p+"self_attn.o_proj.weight", h, q)
		add(p+"post_attention_layernorm.weight", h)
		add(p+"mlp.gate_proj.weight", c.Intermediate, h)
		add(p+"mlp.up_proj.weight", c.Intermediate, h)
		add(p+"mlp.down_proj.weight", h, c.Intermediate)
	}
	add("model.norm.weight", h)
	if !c.TieWordEmbeddings {
		add("lm_head.weight", c.VocabSize, h)
	}
	return names, shapes
}

// canonical maps a stored name to its state-dict name: BERT checkpoints of
// task models carry a "bert." prefix, TensorFlow-converted ones name
// LayerNorm parameters gamma and beta (transformers renames both the same way).
func canonical(cfg *Config, name string) string {
	if cfg.Bert != nil {
		name = strings.TrimPrefix(name, "bert.")
		if strings.HasSuffix(name, "LayerNorm.gamma") {
			name = strings.TrimSuffix(name, "gamma") + "weight"
		}
		if strings.HasSuffix(name, "LayerNorm.beta") {
			name = strings.TrimSuffix(name, "beta") + "bias"
		}
	}
	return name
}

func normalizeNames(w *Weights, cfg *Config) {
	out := make(map[string]*Tensor, len(w.tensors))
	for name, t := range w.tensors {
		c := canonical(cfg, name)
		if _, taken := out[c]; taken && c != name {
			continue // the canonical spelling itself wins
		}
		t.Name = c
		out[c] = t
	}
	w.tensors = out
}

func checkShapes(w *Weights, cfg *Config) error {
	names, shapes := expected(cfg)
	var missing, wrong []string
	for _, n := range names {
		t, ok := w.tensors[n]
		if !ok {
			missing = append(missing, n)
			continue
		}
		if !slices.Equal(t.Shape, shapes[n]) {
			wrong = append(wrong, fmt.Sprintf("%s is %v, config.json implies %v", n, t.Shape, shapes[n]))
		}
	}
	switch {
	case len(missing) > 0:
		more := ""
		if len(missing) > 6 {
			more = fmt.Sprintf(" and %d more", len(missing)-6)
			missing = missing[:6]
		}
		return fmt.Errorf("%w: %s lacks %s%s", ErrWeights, w.Source, strings.Join(missing, ", "), more)
	case len(wrong) > 0:
		return fmt.Errorf("%w: %s: %s", ErrWeights, w.Source, strings.Join(wrong, "; "))
	}
	return nil
}

// loadONNX reads model.onnx and names its initializers (resolveONNX).
func loadONNX(dir string, cfg *Config) (*Weights, error) {
	g, w, inits, err := loadONNXFile(dir, ONNXFile)
	if err != nil {
		return nil, err
	}
	if err := resolveONNX(g, inits, cfg, w); err != nil {
		w.Close()
		return nil, fmt.Errorf("%w: %s: %v", ErrWeights, w.Source, err)
	}
	return w, nil
}

// matmulUse is an initializer consumed as the weight of a MatMul or Gemm.
type matmulUse struct {
	init       string
	transposed bool // stored [in, out] (MatMul's B), i.e. the transpose of the [out, in] weight
	node       int
	bias       string // Gemm's C input, if any
}

// resolveONNX names the initializers of an ONNX export by their state-dict
// names, using the graph rather than trusting names alone:
//
//  1. Orientation comes from use: the B input of MatMul (x·B) is the
//     transpose of the Linear weight ([in, out]); through Transpose, or as
//     Gemm's B with transB=1, it is the weight itself.
//  2. A weight keeps its name when it is a state-dict name (after the
//     "bert." prefix and gamma/beta renames). torch.onnx.export gives the
//     folded transposes of Linear weights anonymous names (onnx::MatMul_123):
//     such a weight takes the name of the bias it is added to
//     (…query.bias → …query.weight), as in every BERT export.
//  3. Bias-free projections (Qwen3) that are still anonymous are assigned
//     in graph order — the exporter's node order is the forward's: q, k, v,
//     o, gate, up, down per layer, then the LM head — and every assignment
//     is checked: the shape must match, q_proj must feed that layer's
//     q_norm and k_proj its k_norm, gate_proj must feed a Sigmoid (SiLU)
//     and up_proj must not. Anything else is an error that says to export
//     safetensors instead.
//  4. Other initializers (embeddings, norms, biases) are taken by name.
func resolveONNX(g *onnxGraph, inits map[string]*Tensor, cfg *Config, w *Weights) error {
	names, shapes := expected(cfg)
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	producer := map[string]int{}
	consumers := map[string][]int{}
	for i, n := range g.nodes {
		for _, o := range n.outputs {
			producer[o] = i
		}
		for _, in := range n.inputs {
			consumers[in] = append(consumers[in], i)
		}
	}
	var uses []matmulUse
	for i, n := range g.nodes {
		switch n.op {
		case "MatMul":
			if len(n.inputs) < 2 {
				continue
			}
			b := n.inputs[1]
			if _, ok := inits[b]; ok {
				uses = append(uses, matmulUse{init: b, transposed: true, node: i})
				continue
			}
			if p, ok := producer[b]; ok && g.nodes[p].op == "Transpose" && len(g.nodes[p].inputs) == 1 {
				perm := g.nodes[p].ints["perm"]
				if _, ok := inits[g.nodes[p].inputs[0]]; ok && (perm == nil || slices.Equal(perm, []int64{1, 0})) {
					uses = append(uses, matmulUse{init: g.nodes[p].inputs[0], transposed: false, node: i})
				}
			}
		case "Gemm":
			if len(n.inputs) < 2 {
				continue
			}
			if _, ok := inits[n.inputs[1]]; !ok {
				continue
			}
			tb := n.ints["transB"]
			u := matmulUse{init: n.inputs[1], transposed: !(len(tb) == 1 && tb[0] == 1), node: i}
			if len(n.inputs) > 2 {
				u.bias = n.inputs[2]
			}
			if ta := n.ints["transA"]; len(ta) == 1 && ta[0] == 1 {
				continue // x transposed: not a Linear layer
			}
			uses = append(uses, u)
		}
	}
	assigned := map[string]bool{} // initializer names placed
	put := func(name string, t *Tensor, transposed bool) {
		tt := *t
		tt.Name = name
		tt.Transposed = transposed && len(t.Shape) == 2
		if tt.Transposed {
			tt.Shape = []int{t.Shape[1], t.Shape[0]}
		}
		w.tensors[name] = &tt
		assigned[t.Name] = true
	}
	var pending []matmulUse
	for _, u := range uses {
		if assigned[u.init] {
			continue
		}
		t := inits[u.init]
		if c := canonical(cfg, u.init); want[c] {
			if _, done := w.tensors[c]; !done {
				put(c, t, u.transposed)
			}
			continue
		}
		bias := u.bias
		if bias == "" {
			for _, ci := range consumers[g.nodes[u.node].outputs[0]] {
				if n := g.nodes[ci]; n.op == "Add" && len(n.inputs) == 2 {
					for _, in := range n.inputs {
						if _, ok := inits[in]; ok {
							bias = in
						}
					}
				}
			}
		}
		if c := canonical(cfg, bias); bias != "" && strings.HasSuffix(c, ".bias") {
			if wn := strings.TrimSuffix(c, ".bias") + ".weight"; want[wn] {
				if _, done := w.tensors[wn]; !done {
					put(wn, t, u.transposed)
					continue
				}
			}
		}
		pending = append(pending, u)
	}
	for name, t := range inits {
		if assigned[name] {
			continue
		}
		if c := canonical(cfg, name); want[c] {
			if _, done := w.tensors[c]; !done {
				put(c, t, false)
			}
		}
	}
	var missing []string
	for _, n := range names {
		if _, ok := w.tensors[n]; !ok {
			missing = append(missing, n)
		}
	}
	if len(pending) == 0 || len(missing) == 0 {
		return nil // checkShapes reports anything still missing
	}
	if cfg.Qwen3 == nil {
		return fmt.Errorf("%d MatMul weights have neither a state-dict name nor a named bias (first: %q); export safetensors (save_pretrained) instead", len(pending), pending[0].init)
	}
	return assignByOrder(g, consumers, inits, pending, missing, shapes, put)
}

// assignByOrder is resolveONNX's step 3 for Qwen3 (see there).
func assignByOrder(g *onnxGraph, consumers map[string][]int, inits map[string]*Tensor, pending []matmulUse, missing []string,
	shapes map[string][]int, put func(string, *Tensor, bool)) error {
	var slots []string
	for _, m := range missing {
		for _, s := range qwen3Linear {
			if strings.HasSuffix(m, s) {
				slots = append(slots, m)
			}
		}
		if m == "lm_head.weight" {
			slots = append(slots, m)
		}
	}
	// A tied head may still appear as one more anonymous MatMul at the end (the folded transpose of the embedding).
	if len(pending) == len(slots)+1 {
		pending = pending[:len(slots)]
	}
	if len(pending) != len(slots) {
		return fmt.Errorf("%d anonymous MatMul weights for %d unnamed projections (%s, ...): cannot match them; export safetensors (save_pretrained) instead",
			len(pending), len(slots), strings.Join(slots[:min(3, len(slots))], ", "))
	}
	reaches := func(from string, depth int, pred func(onnxNode) bool) bool {
		frontier := []string{from}
		seen := map[string]bool{from: true}
		for d := 0; d < depth && len(frontier) > 0; d++ {
			var next []string
			for _, out := range frontier {
				for _, ci := range consumers[out] {
					n := g.nodes[ci]
					if pred(n) {
						return true
					}
					for _, o := range n.outputs {
						if !seen[o] {
							seen[o] = true
							next = append(next, o)
						}
					}
				}
			}
			frontier = next
		}
		return false
	}
	usesInit := func(name string) func(onnxNode) bool {
		return func(n onnxNode) bool { return slices.Contains(n.inputs, name) }
	}
	isOp := func(op string) func(onnxNode) bool { return func(n onnxNode) bool { return n.op == op } }
	for i, u := range pending {
		name := slots[i]
		t := inits[u.init]
		shape := t.Shape
		if u.transposed && len(shape) == 2 {
			shape = []int{shape[1], shape[0]}
		}
		if !slices.Equal(shape, shapes[name]) {
			return fmt.Errorf("anonymous MatMul weight %q (#%d in graph order) is %v, but %s is %v: the export's node order is not the forward's; export safetensors instead",
				u.init, i, shape, name, shapes[name])
		}
		out := g.nodes[u.node].outputs[0]
		prefix := name // "model.layers.N."
		if j := strings.Index(name, "self_attn."); j >= 0 {
			prefix = name[:j]
		} else if j := strings.Index(name, "mlp."); j >= 0 {
			prefix = name[:j]
		}
		var ok bool
		switch {
		case strings.HasSuffix(name, "q_proj.weight"):
			ok = reaches(out, 12, usesInit(prefix+"self_attn.q_norm.weight"))
		case strings.HasSuffix(name, "k_proj.weight"):
			ok = reaches(out, 12, usesInit(prefix+"self_attn.k_norm.weight"))
		case strings.HasSuffix(name, "v_proj.weight"):
			ok = !reaches(out, 12, usesInit(prefix+"self_attn.q_norm.weight")) && !reaches(out, 12, usesInit(prefix+"self_attn.k_norm.weight"))
		case strings.HasSuffix(name, "gate_proj.weight"):
			ok = reaches(out, 2, isOp("Sigmoid"))
		case strings.HasSuffix(name, "up_proj.weight"):
			ok = !reaches(out, 1, isOp("Sigmoid"))
		default:
			ok = true // o_proj, down_proj, lm_head: the shape check above decides
		}
		if !ok {
			return fmt.Errorf("anonymous MatMul weight %q (#%d in graph order) does not feed the graph the way %s does; export safetensors instead", u.init, i, name)
		}
		put(name, t, u.transposed)
	}
	return nil
}
