package embed

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/rlsearch/rlsearch/internal/canary"
	"github.com/rlsearch/rlsearch/internal/ortenv"
	"github.com/rlsearch/rlsearch/transformer"
)

// canaryQueries and canaryPassages are the model canary's fixed sample
// (Config.Provider): short queries and Wikipedia-style passages (title line,
// then text, as corpora are indexed), one passage long enough to fill
// canaryLongTokens, and an empty text (a zero row on both sides).
var (
	canaryQueries = []string{
		"who wrote the iliad",
		"what is the capital of france",
		"when did the first crewed moon landing happen",
		"how do vaccines train the immune system",
	}
	canaryPassages = []string{
		"\"Iliad\"\nThe Iliad is an ancient Greek epic poem in dactylic hexameter, traditionally attributed to Homer.",
		"\"Paris\"\nParis is the capital and largest city of France, on the Seine river in the north of the country.",
		"\"Apollo 11\"\nApollo 11 was the American spaceflight that first landed humans on the Moon, on 20 July 1969.",
		"",
	}
	canaryLong = "\"Vaccine\"\nA vaccine is a biological preparation that provides active acquired immunity to a particular infectious disease. " +
		"It typically contains an agent that resembles a disease-causing microorganism and is often made from weakened or killed forms of the microbe, " +
		"its toxins, or one of its surface proteins. The agent stimulates the body's immune system to recognize the agent as a threat, destroy it, " +
		"and recognize further and destroy any of the microorganisms associated with that agent that it may encounter in the future."
)

// canaryLongTokens caps the long passage (and MaxLength bounds it): long
// enough to cross the attention kernels' tile sizes, short enough that the
// float32 Go reference stays quick.
const canaryLongTokens = 128

// canaryInputs tokenizes the sample as the encoder would serve it.
func (e *Encoder) canaryInputs() (ids [][]int32, names []string) {
	for _, q := range canaryQueries {
		ids = append(ids, e.Tokenize(e.model.QueryPrefix, q))
		names = append(names, "query "+fmt.Sprintf("%q", q))
	}
	for _, p := range canaryPassages {
		ids = append(ids, e.Tokenize(e.model.PassagePrefix, p))
		names = append(names, "passage "+fmt.Sprintf("%.40q", p))
	}
	n := min(e.cfg.MaxLength, canaryLongTokens)
	ids = append(ids, e.tok.Encode(e.model.PassagePrefix+strings.Repeat(canaryLong+" ", 4), n))
	names = append(names, fmt.Sprintf("passage %.40q… (%d tokens)", canaryLong, n))
	return ids, names
}

// runCanary embeds the sample on e (a GPU path) and on the CPU reference
// and compares them (canary.Embeddings). It sets e.canary and extends
// e.reason; the error wraps canary.ErrMismatch on a mismatch.
func (e *Encoder) runCanary() error {
	if e.cfg.SkipCanary {
		e.canary = canary.SkippedByConfig(&e.reason)
		return nil
	}
	t0 := time.Now()
	ids, names := e.canaryInputs()
	got, err := e.embed(context.Background(), ids)
	if err != nil {
		return fmt.Errorf("embed: model canary on %s: %w", e.provider, err)
	}
	want, ref, err := e.canaryReference(ids)
	if err != nil {
		return fmt.Errorf("embed: model canary reference for %s: %w", e.provider, err)
	}
	e.canary = canary.Report{Ran: true, Path: e.provider, Reference: ref, Inputs: len(ids), Measure: "min cosine", Bar: canary.MinCosine}
	v, err := canary.Embeddings(got, want, e.model.Dim, names)
	if err := e.canary.Conclude(t0, v, err, &e.reason); err != nil {
		return fmt.Errorf("embed: %s on %s: %w", e.model.Name, e.provider, err)
	}
	return nil
}

// canaryReference embeds ids on the CPU: ONNX Runtime over model.onnx when
// the directory has it and ONNX Runtime loads, else package transformer's
// float32 Go forward pass over the weights (a directory of
// model.safetensors + config.json, or a binary without a loadable ONNX
// Runtime). It names the reference used.
func (e *Encoder) canaryReference(ids [][]int32) ([]float32, string, error) {
	why := ortenv.Unusable(e.cfg.Dir, ModelFile, e.cfg.ORTLib)
	if why == nil {
		cpu, err := Open(Config{Dir: e.cfg.Dir, ORTLib: e.cfg.ORTLib, Sessions: 1, IntraOpThreads: runtime.GOMAXPROCS(0),
			MaxLength: e.cfg.MaxLength, BatchSize: len(ids), Provider: "cpu", Logf: e.cfg.Logf})
		if err != nil {
			return nil, "", err
		}
		defer cpu.Close()
		v, err := cpu.EmbedIDs(context.Background(), ids)
		return v, "onnxruntime-cpu", err
	}
	tc, w, err := transformer.LoadReference(e.cfg.Dir, transformer.TypeBert, why)
	if err != nil {
		return nil, "", err
	}
	defer w.Close()
	ref := transformer.NewBertRef(*tc.Bert, w)
	return ref.Embed(ids, transformer.Pooling{CLS: e.model.Pooling == "cls", Normalize: e.norm}), "go-fp32-reference", nil
}
