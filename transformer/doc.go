// Package transformer runs the two models of rlsearch's model path without
// ONNX Runtime: BertModel (E5 query and passage encoders) and
// Qwen3ForCausalLM (Qwen3-Reranker), from the weights Hugging Face ships
// (model.safetensors + config.json) or from an ONNX export's initializers.
//
//   - Weights: LoadConfig reads config.json; LoadWeights maps
//     model.safetensors (or its shards) read-only, else model.onnx and its
//     external data, and names every tensor by its state-dict name and
//     [out, in] shape — ONNX initializers by how the graph uses them (see
//     resolveONNX) — checked against config.json.
//   - References: BertRef and Qwen3Ref are float32 forward passes on the
//     CPU written from the architectures. They equal the generators'
//     float64 numpy forward passes and ONNX Runtime's output on the
//     generated test models (tests here, in embed and in rerank), and they
//     are the oracle the GPU path is tested against.
//   - GPU: BertGPU and Qwen3GPU hold the weights in fp16 on one GPU and run
//     the forward pass with cuBLAS GEMMs (package cuda) and the kernels of
//     kernels/nn.cu, on packed variable-length batches (no padding).
//
// No cgo and no build tags: the package builds with CGO_ENABLED=0 (the
// device check's test binary), and without a GPU the GPU constructors
// return errors matching cuda.ErrNoDevice.
package transformer
