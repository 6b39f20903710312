# Two entry points for a fresh Debian 12 machine (see README):
#   make demo   install what is needed, build the wiki_multihop index, serve it, query it
#   make test   install what is needed, vet, and run every test (race detector on)
# Everything downloaded lands in .cache/ (git-ignored); re-running is cheap.

SHELL := /bin/bash
GO ?= go
ROOT := $(CURDIR)
export ONNXRUNTIME_LIB ?= $(ROOT)/.cache/ort/libonnxruntime.so.1
DATA ?= $(ROOT)/../shared/data
BIN := bin/rlsearch
BENCH_BIN := bin/rlsearch-bench

.PHONY: all setup build demo test test-browser test-short test-integrations test-helm test-router-full demo-integrations bench-integrations bench testmodel fmt vet clean kernels gpu-setup gpu-inference-dry bench-ann bench-scale bench-apt bench-setup bench-peers bench-report bench-searchr1 bench-shards bench-1m bench-5m

all: build

setup:
	bash scripts/setup.sh

# Two binaries: bin/rlsearch serves, indexes and answers (what runs on rollout nodes); bin/rlsearch-bench holds the
# benchmark harness, the corpus generator and the evaluations (cmd/rlsearch-bench), with their plotting stack.
build:
	$(GO) build -o $(BIN) ./cmd/rlsearch
	$(GO) build -o $(BENCH_BIN) ./cmd/rlsearch-bench

# The main job. MODEL=dir adds the dense E5 shard (a real E5 export, or `make testmodel`).
demo: setup build
	DATA=$(DATA) MODEL=$(MODEL) bash scripts/demo.sh

# A seeded random BERT of the real architecture (not a trained model): .cache/models/tiny (model.onnx for ours,
# the same weights as model.safetensors for the dense peer's torch encoder, bench/peers/e5_torch.py). Its path is the only
# thing printed on stdout (setup and the generator log to stderr), so that `make demo MODEL=$(make -s testmodel)`
# works as the README writes it (cmd/rlsearch TestReadmeDenseDemo runs that line).
testmodel: setup
	@[ -f .cache/models/tiny/model.safetensors ] || /usr/bin/python3 scripts/gen_bert.py gen --preset tiny --seed 1 \
		--safetensors f32 --tokenizer .cache/tokenizers/bert-uncased.json --out .cache/models/tiny >&2
	@echo "$(ROOT)/.cache/models/tiny"

# vet also checks the static CGO_ENABLED=0 build (bench/gpu/build.sh's device binaries) and runs internal/ortenv's
# tests with it: ONNX Runtime's C API through purego against the real library (a few seconds).
vet:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	CGO_ENABLED=0 $(GO) vet ./... && CGO_ENABLED=0 $(GO) test -count=1 ./internal/ortenv

# The test command CI runs. Native parts must be present: a missing one fails instead of skipping.
# RLSEARCH_BIN: the router's fault tests run shard and router processes of the built binary.
test: setup vet test-integrations test-helm
	RLSEARCH_REQUIRE_NATIVE=1 RLSEARCH_DATA=$(DATA) RLSEARCH_BIN=$(ROOT)/$(BIN) $(GO) test -race -count=1 -timeout 30m ./...
	$(MAKE) test-browser

# The rollout inspector in headless Chromium (inspect.TestBrowser: /ui/ and the HTML report, 1,000 wiki_multihop
# rollouts, a hostile dump), without -race: the race detector makes its Go side ten times slower (20-60 s as is on 2 shared cores).
test-browser: setup
	RLSEARCH_REQUIRE_NATIVE=1 RLSEARCH_DATA=$(DATA) $(GO) test -count=1 -timeout 10m -run '^TestBrowser$$' ./inspect/

# The Helm chart (deploy/helm/rlsearch): helm lint and helm template with helm from its Go module (the tool
# directive of deploy/tools/go.mod, a module of its own so that helm's ~170 modules and the upgrades they force,
# golang.org/x/term among them, stay out of the main module; the first `go tool helm` builds it into the Go build
# cache, ~1-2 min on 2 cores), then every rendered object decoded strictly into the k8s.io/api types.
test-helm:
	cd deploy/tools && $(GO) tool helm lint --strict ../helm/rlsearch && $(GO) tool helm template rlsearch ../helm/rlsearch >/dev/null
	cd deploy/tools && $(GO) vet ./... && $(GO) test -count=1 ./...

# The router's differential test on every wiki_multihop question and 5,000 random queries, BM25 and dense, k 1, 3,
# 10, 100 (make test runs a sample under -race), and the kill -9 test under c = 32 load for 60 s (6 s in make test).
test-router-full: setup build
	RLSEARCH_REQUIRE_NATIVE=1 RLSEARCH_DATA=$(DATA) RLSEARCH_BIN=$(ROOT)/$(BIN) RLSEARCH_FAULT_SECONDS=60 \
		$(GO) test -count=1 -timeout 30m -v -run 'Wiki|Fault' ./server/router/

# Trainer integrations (integrations/, Python 3 + requests): unittest with Debian's python3 against a live
# `rlsearch serve` on loopback over a BM25 index of wiki_multihop built in the test (a few seconds).
test-integrations: setup build
	RLSEARCH_BIN=$(ROOT)/$(BIN) RLSEARCH_DATA=$(DATA) /usr/bin/python3 -m unittest discover -s integrations/tests -t .

# Reward throughput through verl's three reward paths (batch manager, reward loop async / plain), one run.
bench-integrations: setup build
	RLSEARCH_BIN=$(ROOT)/$(BIN) RLSEARCH_DATA=$(DATA) /usr/bin/python3 integrations/bench_rewards.py $(BENCH_INTEGRATIONS_FLAGS)

# Rollout text -> verl tool call -> observation -> rewards (and the Search-R1 hook) on wiki_multihop: integrations/demo.py.
demo-integrations: setup build
	RLSEARCH_BIN=$(ROOT)/$(BIN) RLSEARCH_DATA=$(DATA) /usr/bin/python3 integrations/demo.py

test-short:
	$(GO) test -short ./...

bench: build
	$(GO) test -run '^$$' -bench . -benchtime 2s ./ann/ ./bm25/ ./docstore/ ./server/

# Regenerate the committed GPU kernel images (kernels/*.ptx, *.cubin, resources_sm90.txt) from kernels/topk.cu, scan.cu and nn.cu. Needs nvcc
# (Debian 12: nvidia-cuda-toolkit from `contrib non-free`, ~1.6 GB), so it is not part of setup or test;
# `go test ./kernels` checks the committed images are up to date whenever nvcc 11.8 is on PATH.
kernels:
	bash kernels/build.sh

# ONNX Runtime 1.29.0 with the CUDA execution provider in .cache/ort-gpu (scripts/gpu-setup.sh: two npm packages,
# ~330 MB, integrity-pinned). For GPU nodes and bench/gpu (--device cuda, --rerank-device cuda); not part of setup
# or test: nothing on a machine without CUDA 13 and a GPU can load the provider.
gpu-setup:
	bash scripts/gpu-setup.sh

# The GPU inference check (issue 22) without a GPU: bench/gpu/inference.sh's plumbing on the kernel emulator,
# with the tiny generated models; on the device machine run `bash bench/gpu/inference.sh` (see its header).
gpu-inference-dry: setup
	DRY_RUN=1 OUT=out/gpu-inference-dry bash bench/gpu/inference.sh

clean:
	rm -rf bin out

# Packages of the bench peers (bench/peers): Debian's faiss, OpenMP OpenBLAS (faiss's own threading runtime;
# selected per process through LD_LIBRARY_PATH, the system libblas alternative is left alone), the Search-R1-style
# server's FastAPI + uvicorn + Xapian, Lucene; then faiss rebuilt with its AVX2 kernels into .cache/faiss-avx2
# (bench/peers/setup-faiss-avx2.sh: about 7 minutes on 2 busy cores, once). Not part of `make test`.
BENCH_APT := python3-faiss python3-numpy libopenblas0-openmp python3-fastapi python3-uvicorn python3-xapian python3-hnswlib python3-torch \
	liblucene8-java libjackson2-core-java default-jdk-headless
bench-apt:
	@dpkg -s $(BENCH_APT) >/dev/null 2>&1 || { apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(BENCH_APT); }
bench-setup: bench-apt
	bash bench/peers/setup-faiss-avx2.sh

# Every peer suite on its own (what `rlsearch-bench run` runs next to ours): rows in out/peers.json.
PEERS_SUITES ?= flat,hnsw,programs,serve
bench-peers: build
	$(GO) run ./bench/peers/peersrun -suite $(PEERS_SUITES) -rlsearch $(BIN) -out out/peers.json $(PEERS_FLAGS)

# CPU vector search side by side with faiss (same vectors, same threads): bench/ann/compare.py.
# faiss gets its best threading: Debian's OpenMP OpenBLAS (one OpenMP runtime for faiss and BLAS; pthread OpenBLAS next
# to OpenMP collapsed batch-64 flat search to 337 q/s against 751-912) and OMP_WAIT_POLICY=PASSIVE.
# FAISS=avx2 runs the AVX2 rebuild of `make bench-setup` (the fair peer) instead of Debian's generic build.
FAISS ?= debian
bench-ann: bench-apt
	@if [ "$(FAISS)" = avx2 ] && [ ! -f .cache/faiss-avx2/python/faiss/.built ]; then echo "FAISS=avx2: run make bench-setup first"; exit 1; fi
	LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp OMP_WAIT_POLICY=PASSIVE \
		PYTHONPATH=$(if $(filter avx2,$(FAISS)),$(ROOT)/.cache/faiss-avx2/python,) \
		/usr/bin/python3 bench/ann/compare.py --threads $$(nproc) $(ANNBENCH_FLAGS)

# BM25 at Wikipedia scale against Lucene (Debian liblucene8-java), side by side: scripts/bench-scale.sh.
# SCALE_N=21015324 for the wiki-18 size; work files in SCALE_DIR (reused), reports in out/bench-scale/N/report.md.
SCALE_N ?= 1000000 5000000
SCALE_DIR ?= out/bench-scale
bench-scale: build
	SCALE_N="$(SCALE_N)" SCALE_DIR="$(SCALE_DIR)" DATA="$(DATA)" BIN=$(BIN) BENCH_BIN=$(BENCH_BIN) bash scripts/bench-scale.sh

# The full CPU report, every suite with its peers: out/bench/report.{md,json}, out/bench/plots/ (bench/README.md).
# BENCH_FLAGS adds flags, e.g. BENCH_FLAGS="--quick" or BENCH_FLAGS="--suites bm25,flat --set bm25.gen=1000000".
bench-report: setup build bench-setup
	$(BENCH_BIN) run --data $(DATA) --out out/bench $(BENCH_FLAGS)

# HNSW at 1M and 5M on the generated text-embedding-like set (bench/suites GenTextVectors: 64-d latent Gaussian mixture,
# 64 topics × 32 subtopics, decaying spectrum, common mean, noise; unit vectors; 1,000 held-out queries; exact top-100
# by our fp32 flat search), ours float32 and compressed (int8 traversal + fp16 re-rank) next to faiss and hnswlib,
# batch 1 on 1 thread and batch 64 on 2, interleaved (each repetition: ours, then each peer; the peers build on 2
# threads once and load their cached graph after), CPU time per query, recall@10, bytes/vector and build time in Extra. The set is written once to
# out/bench-work/vectors (1M: 3.1 GB; 5M: 15.4 GB). Opt-in, never part of `make test`: the 1M build takes ~30-60 min
# per system on 2 cores; 5M needs ~40 GB of memory (base + the graph's float32 copy) and is defined, not run here.
BENCH_1M_FLAGS ?= --interleave --threads 2,1 --set hnsw.ef=16,64,128,256 --set hnsw.compressed=true --reps 3 --min-time 1s
bench-1m: build
	$(BENCH_BIN) run --data $(DATA) --suites hnsw --set hnsw.data=text-1000000x768 --out out/bench-1m $(BENCH_1M_FLAGS)
bench-5m: build
	$(BENCH_BIN) run --data $(DATA) --suites hnsw --set hnsw.data=text-5000000x768 --out out/bench-5m $(BENCH_1M_FLAGS)

# Search-R1's two index types (e5_Flat.index, e5_HNSW64.index) reproduced at 100,000 × 768 with python3-faiss,
# imported and searched: exact equality with faiss's IndexFlatIP, HNSW recall@10 on faiss's own graph next to faiss's
# (index/searchr1_bench_test.go). Builds the faiss files once into out/bench-searchr1 (a few minutes on 2 cores).
bench-searchr1:
	RLSEARCH_BENCH_SEARCHR1=1 $(GO) test -run '^$$' -bench BenchmarkSearchR1Indexes -benchtime 1x -timeout 90m ./index/

# Sharded serving against one index on this machine (bench/shardbench): a generated 1M corpus as one index and as
# 2 shards; /retrieve at c = 32 and 1 against one index × 2 cores, 2 shards × 1 core (+ router), 2 shards × 2
# replicas with hedging on and off. Work files in SHARDS_DIR (reused); the table on stdout (bench/README.md).
SHARDS_DIR ?= out/bench-shards
SHARDS_FLAGS ?= -n 1000000 -duration 15s -rounds 2
bench-shards: build
	RLSEARCH_DATA=$(DATA) $(GO) run ./bench/shardbench -rlsearch $(BIN) -rlsearch-bench $(BENCH_BIN) -dir $(SHARDS_DIR) -json $(SHARDS_DIR)/report.json $(SHARDS_FLAGS)
