#!/usr/bin/env bash
# Builds the libFuzzer loader target with clang (build-fuzz/: only the fuzz targets and the engine) and runs it:
# scripts/fuzz.sh [seconds] (default 60). The work corpus under build-fuzz/ starts from the committed
# fuzz/seeds plus a fresh run of fuzz_make_seeds (which wrote those seeds); fuzz/seeds itself is never modified. Any crash/leak/timeout/oom file fails the run.
set -euo pipefail

seconds="${1:-60}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${root}/build-fuzz"
CC=clang CXX=clang++ "${root}/scripts/build.sh" build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNXRT_FUZZ=ON \
  -DNXRT_BUILD_TESTS=OFF -DNXRT_BUILD_EXAMPLES=OFF -DNXRT_BUILD_PYTHON=OFF --target fuzz_loader fuzz_make_seeds

corpus="${build}/corpus"
artifacts="${build}/artifacts"
mkdir -p "${corpus}" "${artifacts}"
cp "${root}"/fuzz/seeds/* "${corpus}/"
"${build}/fuzz/fuzz_make_seeds" "${corpus}"
rm -f "${artifacts}"/crash-* "${artifacts}"/leak-* "${artifacts}"/timeout-* "${artifacts}"/oom-*

log="${build}/fuzz.log"
status=0
"${build}/fuzz/fuzz_loader" "${corpus}" -max_len=65536 -max_total_time="${seconds}" -timeout=10 \
  -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="${artifacts}/" >"${log}" 2>&1 || status=$?

executions="$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "${log}" | grep -Eo '[0-9]+$' || true)"
echo "fuzz_loader: ${executions:-0} executions in ${seconds}s (log: ${log})"

shopt -s nullglob
findings=("${artifacts}"/crash-* "${artifacts}"/leak-* "${artifacts}"/timeout-* "${artifacts}"/oom-*)
if ((${#findings[@]} > 0)) || ((status != 0)); then
  echo "fuzz_loader FAILED (exit ${status}); findings:" >&2
  for finding in "${findings[@]}"; do echo "  ${finding}" >&2; done
  tail -n 40 "${log}" >&2
  exit 1
fi
echo "fuzz_loader: no crashes"
