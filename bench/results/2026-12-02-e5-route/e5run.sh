#!/bin/bash
# E5 route end to end: rlsearch serve vs the torch + faiss Search-R1-style peer, same weights, same vectors.
cd /work/main
export ONNXRUNTIME_LIB=/work/main/.cache/ort/libonnxruntime.so.1
MODEL=${MODEL:-.cache/models/base}
IX=${IX:?}
VEC=${VEC:?}
BACKEND=${BACKEND:-flat}
C=${C:-32}
DUR=${DUR:-20s}
ROUNDS=${ROUNDS:-4}
echo "start $(date -u) load: $(cut -d' ' -f1-3 /proc/loadavg)"
bin/rlsearch serve --index $IX --addr 127.0.0.1:18001 --cache-bytes off --model $MODEL --self-check=false --dense-backend $BACKEND $OURS_ARGS >/tmp/e5run-ours.log 2>&1 &
OURS=$!
OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2 OMP_WAIT_POLICY=PASSIVE LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp \
  /usr/bin/python3 /tmp/rlsearch-bench-peers/searchr1_server.py --corpus /work/shared/data/wiki_multihop/corpus.jsonl \
  --index /tmp/rlsearch-bench-peers/xapian-5465dc6251b33d18 --port 18002 --dense $VEC --encoder $MODEL --threads 2 >/tmp/e5run-peer.log 2>&1 &
PEER=$!
for i in $(seq 1 300); do
  curl -sf http://127.0.0.1:18001/healthz >/dev/null && curl -sf http://127.0.0.1:18002/healthz >/dev/null && break
  sleep 1
done
curl -s http://127.0.0.1:18002/healthz; echo
go run ./bench/abload -old-url http://127.0.0.1:18002 -old-pid $PEER -new-url http://127.0.0.1:18001 -new-pid $OURS \
  -retrievers e5 -k 3 -c $C -duration $DUR -rounds $ROUNDS
echo "end $(date -u) load: $(cut -d' ' -f1-3 /proc/loadavg)"
kill $OURS $PEER; wait
