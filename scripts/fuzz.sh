#!/usr/bin/env bash
# Runs each libFuzzer target of a build configured with AMPC_ENABLE_FUZZERS
# (scripts/sanitize.sh makes one) for SECONDS, from the seed corpus
# (fuzz/make_corpus.py) plus what earlier runs of this build found. Usage:
#   scripts/fuzz.sh [build-dir] [seconds] [target...]
#       (defaults: build-san, 60, every target)
# A crash, leak, sanitizer report or hang (an input over 10 s) fails the
# run and leaves the input in BUILD/fuzz/artifacts/TARGET/; fuzz/README.md
# says how to turn it into a regression test.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-san}
SECONDS_EACH=${2:-60}
shift $(($# < 2 ? $# : 2))
TARGETS=("$@")
if ((${#TARGETS[@]} == 0)); then
  TARGETS=(onnx-import-fuzzer program-load-fuzzer)
fi

for t in "${TARGETS[@]}"; do
  if [[ ! -x "$BUILD/bin/$t" ]]; then
    echo "fuzz: $BUILD/bin/$t does not exist; build it with scripts/sanitize.sh" >&2
    exit 2
  fi
done
if ! grep -q '^AMPC_ENABLE_FUZZERS:BOOL=ON$' "$BUILD/CMakeCache.txt" 2>/dev/null; then
  echo "fuzz: $BUILD was not configured with -DAMPC_ENABLE_FUZZERS=ON" \
       "(its targets only replay saved inputs)" >&2
  exit 2
fi

# The seeds are compiled by this build's amp-run, instrumented too.
export ASAN_OPTIONS=${ASAN_OPTIONS:-allow_user_poisoning=0:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
SEEDS="$BUILD/fuzz/seeds"
# Made again when amp-run changed since: seeds of an older Program format
# would all stop at the loader's version check.
if [[ -f "$SEEDS/.complete" && "$BUILD/bin/amp-run" -nt "$SEEDS/.complete" ]]; then
  rm -rf "$SEEDS"
fi
if [[ ! -f "$SEEDS/.complete" ]]; then
  /usr/bin/python3 fuzz/make_corpus.py --amp-run "$BUILD/bin/amp-run" \
    --out "$SEEDS"
fi

status=0
for t in "${TARGETS[@]}"; do
  corpus="$BUILD/fuzz/corpus/$t"
  artifacts="$BUILD/fuzz/artifacts/$t"
  mkdir -p "$corpus" "$artifacts"
  echo "fuzz: $t for ${SECONDS_EACH} s"
  log="$BUILD/fuzz/$t.log"
  # New inputs go into the first directory; the seeds and the regression
  # inputs are read only.
  if "$BUILD/bin/$t" -max_total_time="$SECONDS_EACH" -timeout=10 \
      -rss_limit_mb=2560 -max_len=65536 -print_final_stats=1 \
      -artifact_prefix="$artifacts/" "$corpus" "$SEEDS/$t" \
      "fuzz/regressions/$t" >"$log" 2>&1; then
    echo "fuzz: $t clean: $(grep -E '^stat::number_of_executed_units' "$log" |
      awk '{print $2}') inputs run, corpus $(ls "$corpus" | wc -l) +" \
      "$(ls "$SEEDS/$t" | wc -l) seeds"
  else
    status=1
    tail -n 60 "$log" >&2
    echo "fuzz: $t FAILED; the input is in $artifacts/ (log: $log)." \
         "Reproduce: $BUILD/bin/$t FILE; add it to fuzz/regressions/$t/" >&2
  fi
done
exit $status
