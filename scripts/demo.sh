#!/usr/bin/env bash
# The main job on ../shared/data/wiki_multihop: build the index, start the
# server, send sample questions through POST /retrieve, print the ranked
# titles (gold passages marked *), the recall table, and serve's peak memory.
# MODEL=dir (an E5 ONNX export or `make testmodel`) adds the dense E5 shard.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${DATA:-../shared/data}
MODEL=${MODEL:-}
PORT=${PORT:-8000}
BIN=bin/rlsearch
BENCH_BIN=bin/rlsearch-bench # eval (the benchmark binary)
CORPUS=$DATA/wiki_multihop/corpus.jsonl
QUESTIONS=$DATA/wiki_multihop/questions.jsonl
OUT=out/wiki_multihop
export ONNXRUNTIME_LIB=${ONNXRUNTIME_LIB:-$PWD/.cache/ort/libonnxruntime.so.1}

model_args=()
if [ -n "$MODEL" ]; then
  model_args=(--model "$MODEL")
  OUT=out/wiki_multihop-$(basename "$MODEL")
  if [ -f "$MODEL/gen_bert.json" ]; then
    echo "note: $MODEL is a generated BERT with random weights (scripts/gen_bert.py), not a trained E5:"
    echo "      it exercises the dense path end to end, but its rankings carry no meaning."
  fi
fi

echo "== index: $CORPUS -> $OUT"
$BIN index --corpus "$CORPUS" --out "$OUT" --force "${model_args[@]}"

echo "== serve on 127.0.0.1:$PORT"
log=$(mktemp)
$BIN serve --index "$OUT" --addr "127.0.0.1:$PORT" "${model_args[@]}" >"$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 1 300); do
  if curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1; then break; fi
  if ! kill -0 $pid 2>/dev/null; then echo "serve exited:"; cat "$log"; exit 1; fi
  sleep 0.1
done
curl -fsS "http://127.0.0.1:$PORT/healthz"; echo

retrievers=(bm25)
[ -n "$MODEL" ] && retrievers+=(e5)
for r in "${retrievers[@]}"; do
  echo "== POST /retrieve ($r): sample questions, top 5 (* = gold passage)"
  $BIN search --server "http://127.0.0.1:$PORT" --retriever "$r" -k 5 --questions "$QUESTIONS" --limit 4
done

echo "== Search-R1 request as its client sends it"
curl -fsS -X POST "http://127.0.0.1:$PORT/retrieve" -H 'Content-Type: application/json' \
  -d '{"queries": ["Who wrote The Old Man and the Sea?"], "topk": 2, "return_scores": true}' | head -c 600; echo

echo "== recall of gold passages ($QUESTIONS)"
$BENCH_BIN eval --index "$OUT" --questions "$QUESTIONS" "${model_args[@]}"

echo "== serve peak memory: $(grep VmHWM /proc/$pid/status | awk '{printf "%.1f MiB", $2/1024}')"
kill -TERM $pid
wait $pid || true
trap - EXIT
rm -f "$log"
echo "== done (graceful shutdown)"
