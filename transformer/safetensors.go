package transformer

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/nlpodyssey/safetensors"
)

// Hugging Face weight files, as `save_pretrained` writes them: one
// model.safetensors, or shards named in model.safetensors.index.json
// ({"weight_map": {tensor name: shard file}}) above the shard size limit
// (Qwen3-Reranker-4B ships two shards).
const (
	SafetensorsFile  = "model.safetensors"
	SafetensorsIndex = "model.safetensors.index.json"
)

// loadSafetensors maps the model's safetensors file(s) in dir. The
// format (8-byte little-endian header length, JSON header, data) is parsed
// and validated by github.com/nlpodyssey/safetensors (a port of Hugging
// Face's reference implementation: offsets must tile the data exactly);
// the data stays in the read-only mapping.
func loadSafetensors(dir string) (*Weights, error) {
	files := []string{SafetensorsFile}
	if raw, err := os.ReadFile(filepath.Join(dir, SafetensorsIndex)); err == nil {
		var idx struct {
			WeightMap map[string]string `json:"weight_map"`
		}
		if err := json.Unmarshal(raw, &idx); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrWeights, filepath.Join(dir, SafetensorsIndex), err)
		}
		files = files[:0]
		for _, f := range idx.WeightMap {
			if filepath.Base(f) != f {
				return nil, fmt.Errorf("%w: %s names shard %q outside the directory", ErrWeights, SafetensorsIndex, f)
			}
			if !slices.Contains(files, f) {
				files = append(files, f)
			}
		}
		slices.Sort(files)
		if len(files) == 0 {
			return nil, fmt.Errorf("%w: %s has an empty weight_map", ErrWeights, filepath.Join(dir, SafetensorsIndex))
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	w := &Weights{Format: "safetensors", Source: filepath.Join(dir, files[0]), tensors: map[string]*Tensor{}}
	for _, f := range files {
		path := filepath.Join(dir, f)
		data, unmap, err := mapFile(path)
		if err != nil {
			w.Close()
			return nil, err
		}
		w.closers = append(w.closers, unmap)
		if err := w.addSafetensors(path, data); err != nil {
			w.Close()
			return nil, err
		}
	}
	return w, nil
}

// ParseSafetensors parses one safetensors image held in memory (tests,
// fuzzing); data must outlive the returned Weights.
func ParseSafetensors(data []byte) (*Weights, error) {
	w := &Weights{Format: "safetensors", Source: "memory", tensors: map[string]*Tensor{}}
	if err := w.addSafetensors("memory", data); err != nil {
		return nil, err
	}
	return w, nil
}

func (w *Weights) addSafetensors(path string, data []byte) error {
	st, err := safetensors.Deserialize(data)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrWeights, path, err)
	}
	for _, nt := range st.Tensors() {
		var dt DType
		switch nt.TensorView.DType() {
		case safetensors.F32:
			dt = F32
		case safetensors.F16:
			dt = F16
		case safetensors.BF16:
			dt = BF16
		default:
			// Integer buffers (position_ids in old BERT checkpoints) are not weights we use.
			continue
		}
		shape := make([]int, len(nt.TensorView.Shape()))
		for i, d := range nt.TensorView.Shape() {
			if d > 1<<40 {
				return fmt.Errorf("%w: %s: tensor %q has dimension %d", ErrWeights, path, nt.Name, d)
			}
			shape[i] = int(d)
		}
		if _, dup := w.tensors[nt.Name]; dup {
			return fmt.Errorf("%w: %s: tensor %q appears in two shards", ErrWeights, path, nt.Name)
		}
		w.tensors[nt.Name] = &Tensor{Name: nt.Name, DType: dt, Shape: shape, data: nt.TensorView.Data()}
	}
	return nil
}
