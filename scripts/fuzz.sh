#!/usr/bin/env bash
# Builds the libFuzzer targets and runs each for a bounded time: scripts/fuzz.sh [seconds-per-target] (default 60).
#   fuzz_loader  model bytes -> parse -> Session
#   fuzz_kernel  one node of any registered op (fuzz/fuzz_model_builder.h has the byte format)
#   fuzz_graph   small graphs of 2-6 nodes
#   fuzz_tokenizer  tokenizer.json bytes, NUL, text -> nxrt.genai's tokenizer (load, encode, decode)
# Tree: NXRT_FUZZ_TREE, when set, names an already-configured tree with NXRT_FUZZ=ON (e.g. the combined clang
# sanitizer tree): only the fuzz targets are built there (ninja, no reconfigure). Unset, build-fuzz/ is configured
# here (clang, RelWithDebInfo: the optimised tree for long runs) with nothing but the engine and the targets.
# Each target's work corpus ($tree/fuzz-corpus/<target>) starts from the committed inputs (fuzz/seeds plus a fresh
# fuzz_make_seeds run for the loader, fuzz/corpus/<target>, fuzz/regressions/<target>), which are never modified.
# Findings (crash-, leak-, timeout-, oom- files) go to $tree/fuzz-artifacts/<target>/; any finding, or a target
# that exits non-zero, fails the run after all targets ran. Per-input limit: 10 s (-timeout=10). -entropic=0:
# with a binary this large, libFuzzer's entropic schedule costs about half of each execution.
set -euo pipefail

seconds="${1:-60}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
targets=(fuzz_loader fuzz_kernel fuzz_graph fuzz_tokenizer fuzz_serve_request)

if [[ -n "${NXRT_FUZZ_TREE:-}" ]]; then
  build="$(cd "${NXRT_FUZZ_TREE}" && pwd)"
  if [[ ! -f "${build}/build.ninja" ]]; then
    echo "NXRT_FUZZ_TREE=${NXRT_FUZZ_TREE} is not a configured ninja tree" >&2
    exit 2
  fi
  ninja -C "${build}" -j"${NXRT_JOBS:-2}" "${targets[@]}" fuzz_make_seeds
else
  build="${root}/build-fuzz"
  CC=clang CXX=clang++ "${root}/scripts/build.sh" build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNXRT_FUZZ=ON \
    -DNXRT_BUILD_TESTS=OFF -DNXRT_BUILD_EXAMPLES=OFF -DNXRT_BUILD_PYTHON=OFF --target "${targets[@]}" fuzz_make_seeds
fi

# Committed inputs of a target (directories that exist).
committed_inputs() {
  local name="$1" folder
  local -a folders
  case "${name}" in
    loader) folders=(seeds corpus/loader regressions/loader) ;;
    *) folders=("corpus/${name}" "regressions/${name}") ;;
  esac
  for folder in "${folders[@]}"; do
    if [[ -d "${root}/fuzz/${folder}" ]]; then echo "${root}/fuzz/${folder}"; fi
  done
}

failed=0
shopt -s nullglob
for target in "${targets[@]}"; do
  name="${target#fuzz_}"
  corpus="${build}/fuzz-corpus/${name}"
  artifacts="${build}/fuzz-artifacts/${name}"
  log="${build}/fuzz-${name}.log"
  mkdir -p "${corpus}" "${artifacts}"
  rm -f "${artifacts}"/crash-* "${artifacts}"/leak-* "${artifacts}"/timeout-* "${artifacts}"/oom-*
  if [[ "${name}" == loader ]]; then
    "${build}/fuzz/fuzz_make_seeds" "${corpus}"
  fi
  mapfile -t inputs < <(committed_inputs "${name}")
  status=0
  # The work corpus comes first: libFuzzer writes new units into the first directory only.
  "${build}/fuzz/${target}" "${corpus}" "${inputs[@]}" -max_len=65536 -max_total_time="${seconds}" -timeout=10 \
    -entropic=0 -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="${artifacts}/" >"${log}" 2>&1 || status=$?
  executions="$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "${log}" | grep -Eo '[0-9]+$' | tail -n 1 || true)"
  coverage="$(grep -Eo 'cov: [0-9]+' "${log}" | tail -n 1 || true)"
  echo "${target}: ${executions:-0} executions in ${seconds}s, ${coverage:-cov: ?} (log: ${log})"
  findings=("${artifacts}"/crash-* "${artifacts}"/leak-* "${artifacts}"/timeout-* "${artifacts}"/oom-*)
  if ((${#findings[@]} > 0)) || ((status != 0)); then
    failed=1
    echo "${target} FAILED (exit ${status}); findings:" >&2
    for finding in "${findings[@]}"; do echo "  ${finding}" >&2; done
    tail -n 40 "${log}" >&2
  fi
done
if ((failed)); then
  echo "fuzzing found problems; add each reproducer under fuzz/regressions/<target>/ once fixed (docs/fuzzing.md)" >&2
  exit 1
fi
echo "fuzz: no findings"
