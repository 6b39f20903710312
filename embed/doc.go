// Package embed holds the text encoders: E5 and other BERT-family models
// run through ONNX Runtime. It owns query/passage prefixes, pooling and
// normalization of the output vectors.
//
// # Tokenization
//
// The encoders tokenize with package tokenizer's WordPiece (LoadWordPiece
// of the model directory's tokenizer.json): a pure-Go BERT WordPiece that
// returns the same ids as Hugging Face tokenizers 0.22, tested against
// that library through scripts/tokenizer_oracle.js.
//
// # Build tags and hardware
//
// The tokenizer is plain Go and runs on the CPU. The ONNX Runtime encoders
// in this package (providers cpu, cuda) need the ONNX Runtime shared
// library (scripts/setup.sh installs the CPU build under .cache/ort, make
// gpu-setup the GPU build under .cache/ort-gpu), bound with cgo
// (onnxruntime_go) or, in a CGO_ENABLED=0 build, through purego
// (internal/ortenv). Provider gpu (package transformer's fp16 forward
// pass) needs no ONNX Runtime. Providers gpu and cuda run the model canary
// before serving (Config.Provider).
//
// # Tests
//
// Tests that need downloaded files (the tokenizer.json, a model)
// skip with a message telling to run `make setup`, and fail instead when
// RLSEARCH_REQUIRE_NATIVE=1, as in CI.
package embed
