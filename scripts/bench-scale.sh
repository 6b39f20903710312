#!/usr/bin/env bash
# bench-scale: rlsearch's BM25 against Lucene's at Wikipedia scale, side by side.
#
#   make bench-scale                                  # N = 1,000,000 and 5,000,000
#   make bench-scale SCALE_N=21015324                 # wiki-18 size (opt-in: hours, ~20+ GB of work files)
#   SCALE_N=18175 ROUNDS=1 DURATION=2 bash scripts/bench-scale.sh   # quick check on the real 18k corpus
#
# For each N: generate a wiki-shaped corpus (`rlsearch-bench gencorpus --model topical`, seeded with the real
# wiki_multihop corpus), build our index (`rlsearch index`) and Lucene's (bench/lucene/BenchIndex, the way
# Pyserini indexes a JsonCollection), both on one core; then ROUNDS interleaved rounds of
#   ours:   BM25 open + batch 1 + batch 1,000 on one core (`rlsearch-bench index`); `serve` start to /healthz 200; /retrieve at
#           concurrency 32 on all cores (Lucene has no server here)
#   Lucene: DirectoryReader open + batch 1 + the same 1,000 queries in a loop on one core (one JVM thread)
# and print a Markdown table (medians, ratio ours/Lucene, top-10 agreement) that is also saved as
# $REPORT_DIR/N/report.md. Queries: the real questions (wiki_multihop/questions.jsonl).
#
# Environment (defaults):
#   SCALE_N="1000000 5000000"   sizes to run
#   SCALE_DIR=out/bench-scale   work files: N/corpus.jsonl.zst, N/rlsearch.idx, N/lucene.idx (reused when present)
#   REPORT_DIR=out/bench-scale  reports: N/report.md and the raw measurements of every round
#   FORCE=0                     1 regenerates the corpora and rebuilds both indexes
#   ROUNDS=3 DURATION=5         interleaved rounds; seconds per query-speed measurement
#   WARMUP=10                   CPU seconds of untimed Lucene queries first, so that the JIT has compiled the search path
#   BATCH=1000 CONCURRENCY=32   batch size of the batch measurement; HTTP clients
#   CPU=0                       the core the one-core measurements are pinned to (taskset)
#   SCALE_CORPUS=               use this corpus file for every N instead of generating one (N is then a label)
#   BIN=bin/rlsearch            the serving binary (index, serve)
#   BENCH_BIN=bin/rlsearch-bench  the benchmark binary (index measurements)
#   GEN_BIN=$BENCH_BIN          binary that has the `gencorpus` command
#   LUCENE_HEAP_INDEX=3g LUCENE_HEAP_SEARCH=2g LUCENE_RAM_MB=1024 LUCENE_MERGE=true
#   DATA=../shared/data         questions and the seed corpus
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

SCALE_N=${SCALE_N:-"1000000 5000000"}
SCALE_DIR=${SCALE_DIR:-out/bench-scale}
REPORT_DIR=${REPORT_DIR:-out/bench-scale}
FORCE=${FORCE:-0}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5}
WARMUP=${WARMUP:-10}
BATCH=${BATCH:-1000}
CONCURRENCY=${CONCURRENCY:-32}
CPU=${CPU:-0}
SCALE_CORPUS=${SCALE_CORPUS:-}
BIN=${BIN:-bin/rlsearch}
BENCH_BIN=${BENCH_BIN:-bin/rlsearch-bench}
GEN_BIN=${GEN_BIN:-$BENCH_BIN}
DATA=${DATA:-$ROOT/../shared/data}
SEED_CORPUS=${SEED_CORPUS:-$DATA/wiki_multihop/corpus.jsonl}
QUESTIONS=${QUESTIONS:-$DATA/wiki_multihop/questions.jsonl}
LUCENE_HEAP_INDEX=${LUCENE_HEAP_INDEX:-3g}
LUCENE_HEAP_SEARCH=${LUCENE_HEAP_SEARCH:-2g}
LUCENE_RAM_MB=${LUCENE_RAM_MB:-1024}
LUCENE_MERGE=${LUCENE_MERGE:-true}

unset MODEL # our commands read --model from $MODEL; these indexes are BM25 only

log() { echo "bench-scale: $*" >&2; }
die() { log "$*"; exit 1; }

# --- tools (Debian packages), installed once -------------------------------------------------------
need=()
command -v javac >/dev/null || need+=(default-jdk-headless)
ls /usr/share/java/lucene-core-8*.jar >/dev/null 2>&1 || need+=(liblucene8-java)
[ -f /usr/share/java/jackson-core.jar ] || need+=(libjackson2-core-java)
[ -x /usr/bin/time ] || need+=(time)
command -v zstd >/dev/null || need+=(zstd)
command -v curl >/dev/null || need+=(curl)
command -v taskset >/dev/null || need+=(util-linux)
[ -x /usr/bin/python3 ] || need+=(python3)
if [ ${#need[@]} -gt 0 ]; then
	log "installing ${need[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=600 "${need[@]}" >/dev/null
fi
/usr/bin/python3 bench/lucene/report.py --selftest >/dev/null
[ -x "$BIN" ] || die "$BIN not found: run 'make build' first"
[ -x "$BENCH_BIN" ] || die "$BENCH_BIN not found: run 'make build' first"
[ -f "$QUESTIONS" ] || die "questions $QUESTIONS not found (set DATA or QUESTIONS)"

# --- the Lucene programs ----------------------------------------------------------------------------
CP=$(ls /usr/share/java/lucene-core-8*.jar /usr/share/java/lucene-analyzers-common-8*.jar | tr '\n' ':')/usr/share/java/jackson-core.jar
CLASSES=$ROOT/out/bench-scale-classes
if [ ! -f "$CLASSES/BenchSearch.class" ] || [ -n "$(find bench/lucene -name '*.java' -newer "$CLASSES/BenchSearch.class")" ]; then
	log "compiling bench/lucene"
	rm -rf "$CLASSES.tmp" && mkdir -p "$CLASSES.tmp"
	javac -cp "$CP" -d "$CLASSES.tmp" bench/lucene/*.java
	rm -rf "$CLASSES" && mv "$CLASSES.tmp" "$CLASSES"
fi
JAVA1=(java -XX:ActiveProcessorCount=1 -cp "$CP:$CLASSES")
LUCENE_VERSION=$(basename "$(ls /usr/share/java/lucene-core-8*.jar | head -1)" .jar | sed 's/lucene-core-//')
JAVA_VERSION=$(java -version 2>&1 | head -1 | sed 's/.*version "\([^"]*\)".*/\1/')
PIN=(taskset -c "$CPU")

# timev OUT CMD...: run CMD under GNU time -v (peak RSS of the largest process, wall clock) into OUT.
timev() { local out=$1; shift; /usr/bin/time -v -o "$out" "$@"; }

port=$((20000 + RANDOM % 20000))
serve_pid=
cleanup() { if [ -n "$serve_pid" ]; then kill "$serve_pid" 2>/dev/null || true; wait "$serve_pid" 2>/dev/null || true; fi; }
trap cleanup EXIT

LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
for N in $SCALE_N; do
	[[ $N =~ ^[0-9]+$ ]] || die "SCALE_N entry '$N' is not a number"
	W=$SCALE_DIR/$N R=$REPORT_DIR/$N
	mkdir -p "$W" "$R"
	W=$(cd "$W" && pwd) R=$(cd "$R" && pwd)

	# 1. corpus
	if [ -n "$SCALE_CORPUS" ]; then
		corpus=$SCALE_CORPUS
	else
		corpus=$W/corpus.jsonl.zst
		if [ "$FORCE" = 1 ] || [ ! -f "$corpus" ]; then
			"$GEN_BIN" gencorpus -h >/dev/null 2>&1 || die "$GEN_BIN has no gencorpus command (set GEN_BIN, or SCALE_CORPUS to an existing corpus)"
			log "N=$N: generating $corpus"
			"$GEN_BIN" gencorpus --seed-corpus "$SEED_CORPUS" --n "$N" --seed 1 --model topical --out "$corpus"
		fi
	fi
	[ -f "$corpus" ] || die "corpus $corpus not found"

	# 2. our index, one core (build stats are kept beside the index, so a reused index keeps them)
	# A corpus newer than a build (regenerated, or another SCALE_CORPUS) rebuilds it.
	if [ "$FORCE" = 1 ] || [ ! -f "$W/rlsearch.idx/meta.json" ] || [ ! -f "$W/build-ours.time" ] || [ "$corpus" -nt "$W/build-ours.time" ]; then
		log "N=$N: rlsearch index (one core)"
		GOMAXPROCS=1 timev "$W/build-ours.time.tmp" "${PIN[@]}" "$BIN" index --corpus "$corpus" --out "$W/rlsearch.idx" --force --quiet
		mv "$W/build-ours.time.tmp" "$W/build-ours.time"
	fi

	# 3. Lucene's index, one core, one indexing thread
	if [ "$FORCE" = 1 ] || [ ! -f "$W/build-lucene.json" ] || ! ls "$W"/lucene.idx/segments_* >/dev/null 2>&1 || [ "$corpus" -nt "$W/build-lucene.json" ]; then
		log "N=$N: Lucene index (one core)"
		rm -rf "$W/lucene.idx" "$W/lucene.idx.tmp"
		case $(head -c 4 "$corpus" | od -An -tx1 | tr -d ' ') in
		28b52ffd) src="zstd -dc '$corpus'" ;;
		1f8b*) src="gzip -dc '$corpus'" ;;
		*) src="cat '$corpus'" ;;
		esac
		timev "$W/build-lucene.time.tmp" "${PIN[@]}" bash -c "set -o pipefail; $src | ${JAVA1[*]@Q} -Xmx$LUCENE_HEAP_INDEX BenchIndex --corpus - --out '$W/lucene.idx' --ram-mb $LUCENE_RAM_MB --merge $LUCENE_MERGE" >"$W/build-lucene.json.tmp"
		mv "$W/build-lucene.time.tmp" "$W/build-lucene.time"
		mv "$W/build-lucene.json.tmp" "$W/build-lucene.json"
	fi
	cp "$W/build-ours.time" "$W/build-lucene.time" "$W/build-lucene.json" "$R/" 2>/dev/null || true

	# 4. interleaved rounds
	rm -rf "$R"/round-*
	for r in $(seq 1 "$ROUNDS"); do
		D=$R/round-$r
		mkdir -p "$D"
		log "N=$N round $r/$ROUNDS: rlsearch BM25 (one core)"
		GOMAXPROCS=1 timev "$D/ours-bm25.time" "${PIN[@]}" "$BENCH_BIN" index --mode bm25 --index "$W/rlsearch.idx" --check-docs=false \
			--questions "$QUESTIONS" --batch "$BATCH" --duration "${DURATION}s" --run-out "$R/ours.run" --json "$D/ours-bm25.json" >"$D/ours-bm25.txt"

		log "N=$N round $r/$ROUNDS: Lucene BM25 (one core)"
		timev "$D/lucene-search.time" "${PIN[@]}" "${JAVA1[@]}" -Xmx"$LUCENE_HEAP_SEARCH" BenchSearch --index "$W/lucene.idx" \
			--questions "$QUESTIONS" --batch "$BATCH" --duration "$DURATION" --warmup "$WARMUP" --run-out "$R/lucene.run" >"$D/lucene-search.json"

		log "N=$N round $r/$ROUNDS: rlsearch serve start to /healthz"
		t0=$(date +%s%N)
		"$BIN" serve --index "$W/rlsearch.idx" --addr "127.0.0.1:$port" >/dev/null 2>"$D/ours-serve.log" &
		serve_pid=$!
		until curl -sf -o /dev/null "http://127.0.0.1:$port/healthz"; do
			kill -0 "$serve_pid" 2>/dev/null || die "rlsearch serve exited early: $(tail -3 "$D/ours-serve.log")"
			sleep 0.005
		done
		awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f\n", (b - a) / 1e6 }' >"$D/ours-serve-healthz.txt"
		kill "$serve_pid" && wait "$serve_pid" 2>/dev/null || true
		serve_pid=

		log "N=$N round $r/$ROUNDS: rlsearch /retrieve, concurrency $CONCURRENCY (all cores)"
		"$BENCH_BIN" index --mode http --index "$W/rlsearch.idx" --questions "$QUESTIONS" --concurrency "$CONCURRENCY" \
			--duration "${DURATION}s" --json "$D/ours-http.json" >"$D/ours-http.txt"
	done

	cat >"$R/meta.json" <<EOF
{"n": $N, "corpus": "$corpus", "ours_index": "$W/rlsearch.idx", "lucene_index": "$W/lucene.idx", "questions": "$QUESTIONS",
 "batch": $BATCH, "concurrency": $CONCURRENCY, "rounds": $ROUNDS, "duration_s": $DURATION, "cpus": $(nproc),
 "machine": "$(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'; true)), $(free -g | awk '/Mem:/{print $2}') GiB",
 "load": "$LOAD", "lucene_version": "$LUCENE_VERSION", "java_version": "$JAVA_VERSION",
 "lucene_heap_index": "$LUCENE_HEAP_INDEX", "lucene_heap_search": "$LUCENE_HEAP_SEARCH"}
EOF
	/usr/bin/python3 bench/lucene/report.py --dir "$R" --n "$N" --out "$R/report.md"
	echo
done
