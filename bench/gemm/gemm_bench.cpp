// GEMM throughput of nxrt (B packed per call, and a prepacked B as MatMul/Gemm use for constant weights)
// against OpenBLAS (when built with it) at 1 and 2 threads, as GFLOP/s and as a fraction of the measured
// single-core peak of the active CPU tier (multiply-add chains in its widest registers; NXRT_CPU_ISA lowers the tier
// for the peak and the GEMM alike), the best run seen so far, re-measured around every row; times the thread count.
// Usage: nxrt_gemm_bench [min_seconds_per_measurement] [--cpu-time] [--filter=SUBSTRING]
// --filter runs only the rows whose "<shape label> <type>" contains SUBSTRING (e.g. "1024 x 1024 x 1024 f64").
// --cpu-time measures process CPU time instead of wall time: on a loaded machine the single-thread numbers
// then show what the code does per core-second (with 2 threads it sums both threads, spinning included).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "core/thread_pool.h"
#include "ep/cpu/microkernels/cpu_features.h"
#include "ep/cpu/microkernels/gemm.h"

#if defined(NXRT_BENCH_OPENBLAS)
#include <cblas.h>
extern "C" void openblas_set_num_threads(int num_threads);
#endif

namespace {

bool g_cpu_time = false;
// Rows whose "<label> <type>" does not contain this substring are skipped (empty: run all).
std::string g_filter;

double now_seconds() {
  timespec t{};
  clock_gettime(g_cpu_time ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

double seconds_since(double start) { return now_seconds() - start; }

// Single-thread f32 peak in GFLOP/s of the active tier (ep/cpu/microkernels/cpu_features.h) over one short run:
// independent multiply-add chains in that tier's widest registers (FMA for avx512 and avx2, mul + add on SSE2 for
// generic). The f64 peak is half of it.
#if defined(__x86_64__)
// One body per tier, so that each is compiled entirely for its target: independent chains acc = acc * x + y, as
// many as fit the tier's registers beside x and y (16 of 32 zmm; 12 of 16 ymm or xmm: more would spill).
#define NXRT_PEAK_LOOP(Vec, kLanes, kChainCount, set1, multiply_add, add, store)           \
  constexpr int kChains = kChainCount;                                                    \
  constexpr int64_t kIterations = 4'000'000;                                              \
  Vec acc[kChains];                                                                       \
  for (int i = 0; i < kChains; ++i) acc[i] = set1(static_cast<float>(i));                 \
  const Vec x = set1(0.999999f);                                                          \
  const Vec y = set1(1e-7f);                                                              \
  const double start = now_seconds();                                                     \
  for (int64_t it = 0; it < kIterations; ++it) {                                          \
    _Pragma("GCC unroll 16") for (int i = 0; i < kChains; ++i) acc[i] = multiply_add(acc[i], x, y); \
  }                                                                                       \
  const double elapsed = seconds_since(start);                                            \
  Vec sum = acc[0];                                                                       \
  for (int i = 1; i < kChains; ++i) sum = add(sum, acc[i]);                               \
  alignas(64) float lanes[16];                                                            \
  store(lanes, sum);                                                                      \
  volatile float sink = lanes[0];                                                         \
  (void)sink;                                                                             \
  return 2.0 * (kLanes) * kChains * static_cast<double>(kIterations) / elapsed * 1e-9;

#define NXRT_SSE2_MULTIPLY_ADD(a, b, c) _mm_add_ps(_mm_mul_ps(a, b), c)

__attribute__((target("avx512f"))) double measure_avx512_once() {
  NXRT_PEAK_LOOP(__m512, 16, 16, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps, _mm512_store_ps)
}
__attribute__((target("avx2,fma"))) double measure_avx2_once() {
  NXRT_PEAK_LOOP(__m256, 8, 12, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps, _mm256_store_ps)
}
double measure_sse2_once() { NXRT_PEAK_LOOP(__m128, 4, 12, _mm_set1_ps, NXRT_SSE2_MULTIPLY_ADD, _mm_add_ps, _mm_store_ps) }

double measure_f32_fma_peak_once() {
  switch (nxrt::cpu::active_cpu_isa()) {
    case nxrt::cpu::CpuIsa::kAvx512: return measure_avx512_once();
    case nxrt::cpu::CpuIsa::kAvx2: return measure_avx2_once();
    case nxrt::cpu::CpuIsa::kGeneric: break;
  }
  return measure_sse2_once();
}
#else
double measure_f32_fma_peak_once() { return 0.0; }
#endif

// The best of several runs: on a shared machine (or a vCPU whose sibling is busy) single runs read low.
double measure_f32_fma_peak() {
  double best = 0.0;
  for (int run = 0; run < 8; ++run) best = std::max(best, measure_f32_fma_peak_once());
  return best;
}

template <class T>
std::vector<T> random_matrix(int64_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<T> v(static_cast<size_t>(count));
  for (T& x : v) x = static_cast<T>(dist(rng));
  return v;
}

// Median seconds per call of `fn` over repeated batches, each batch lasting at least min_seconds / 5.
template <class Fn>
double time_call(Fn&& fn, double min_seconds) {
  fn();
  std::vector<double> samples;
  for (int batch = 0; batch < 5; ++batch) {
    int64_t calls = 0;
    const double start = now_seconds();
    do {
      fn();
      ++calls;
    } while (seconds_since(start) < min_seconds / 5);
    samples.push_back(seconds_since(start) / static_cast<double>(calls));
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

struct Shape {
  int64_t m, n, k;
  const char* label;
};

template <class T>
void bench_shape(const Shape& s, int threads, double& peak_f32, double min_seconds) {
  using nxrt::cpu::GemmArgs;
  const GemmArgs g{false, false, s.m, s.n, s.k, s.k, s.n, s.n};
  const auto a = random_matrix<T>(s.m * s.k, 1);
  const auto b = random_matrix<T>(s.k * s.n, 2);
  std::vector<T> c(static_cast<size_t>(s.m * s.n));
  nxrt::ThreadPool pool(threads);
  const auto packed = nxrt::cpu::PackedB<T>::pack(g, b.data());
  const double flops = 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
  const bool is_f32 = std::is_same_v<T, float>;
  if (!g_filter.empty() && (std::string(s.label) + (is_f32 ? " f32" : " f64")).find(g_filter) == std::string::npos) {
    return;
  }
  peak_f32 = std::max(peak_f32, measure_f32_fma_peak());
  auto run_nxrt = [&] {
    if constexpr (std::is_same_v<T, float>) {
      nxrt::cpu::gemm_f32(g, 1.0f, a.data(), b.data(), 0.0f, c.data(), pool);
    } else {
      nxrt::cpu::gemm_f64(g, 1.0, a.data(), b.data(), 0.0, c.data(), pool);
    }
  };
  auto run_packed = [&] {
    if constexpr (std::is_same_v<T, float>) {
      nxrt::cpu::gemm_f32_packed(g, 1.0f, a.data(), packed, 0.0f, c.data(), pool);
    } else {
      nxrt::cpu::gemm_f64_packed(g, 1.0, a.data(), packed, 0.0, c.data(), pool);
    }
  };
  double blas_seconds = 0.0;
  // Interleaved: nxrt, prepacked nxrt, OpenBLAS, repeated; the best median of each is kept.
  double nxrt_seconds = 1e30;
  double packed_seconds = 1e30;
  for (int round = 0; round < 2; ++round) {
    nxrt_seconds = std::min(nxrt_seconds, time_call(run_nxrt, min_seconds));
    packed_seconds = std::min(packed_seconds, time_call(run_packed, min_seconds));
#if defined(NXRT_BENCH_OPENBLAS)
    openblas_set_num_threads(threads);
    const double blas = time_call(
        [&] {
          if constexpr (std::is_same_v<T, float>) {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s.m, s.n, s.k, 1.0f, a.data(), s.k, b.data(), s.n,
                        0.0f, c.data(), s.n);
          } else {
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s.m, s.n, s.k, 1.0, a.data(), s.k, b.data(), s.n,
                        0.0, c.data(), s.n);
          }
        },
        min_seconds);
    blas_seconds = round == 0 ? blas : std::min(blas_seconds, blas);
#endif
  }
  peak_f32 = std::max(peak_f32, measure_f32_fma_peak());
  // CPU time sums the threads, so per CPU-second the reference is one core's peak.
  const double peak = (is_f32 ? peak_f32 : peak_f32 / 2) * (g_cpu_time ? 1 : threads);
  const auto gflops = [&](double seconds) { return seconds > 0 ? flops / seconds * 1e-9 : 0.0; };
  std::printf("| %-22s | %s | %d | %9.3f | %7.1f (%3.0f%%) | %7.1f (%3.0f%%) | ", s.label, is_f32 ? "f32" : "f64",
              threads, nxrt_seconds * 1e3, gflops(nxrt_seconds), 100 * gflops(nxrt_seconds) / peak,
              gflops(packed_seconds), 100 * gflops(packed_seconds) / peak);
  if (blas_seconds > 0) {
    std::printf("%9.3f | %7.1f (%3.0f%%) |\n", blas_seconds * 1e3, gflops(blas_seconds),
                100 * gflops(blas_seconds) / peak);
  } else {
    std::printf("      n/a |     n/a |\n");
  }
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  double min_seconds = 1.0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--cpu-time") == 0) {
      g_cpu_time = true;
    } else if (std::strncmp(argv[i], "--filter=", 9) == 0) {
      g_filter = argv[i] + 9;
    } else {
      min_seconds = std::atof(argv[i]);
    }
  }
  double peak = measure_f32_fma_peak();
  std::printf("single-core peak of the %s tier: %.1f GFLOP/s f32, %.1f GFLOP/s f64;"
              " clock: %s\n\n",
              std::string(nxrt::cpu::cpu_isa_name(nxrt::cpu::active_cpu_isa())).c_str(), peak, peak / 2,
              g_cpu_time ? "process CPU time" : "wall");
  std::printf("| shape (m x k x n)      | type | threads | nxrt ms | nxrt GFLOP/s (peak) | prepacked GFLOP/s (peak) |"
              " OpenBLAS ms | OpenBLAS GFLOP/s (peak) |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  const Shape shapes[] = {{1024, 1024, 1024, "1024 x 1024 x 1024"},
                          {1, 1024, 1024, "1 x 1024 x 1024 (GEMV)"},
                          {197, 768, 192, "197 x 192 x 768"},
                          {197, 192, 768, "197 x 768 x 192"},
                          {128, 2304, 768, "128 x 768 x 2304"},
                          {512, 1280, 768, "512 x 768 x 1280"},
                          {512, 2048, 768, "512 x 768 x 2048"}};
  for (const Shape& s : shapes) {
    for (int threads : {1, 2}) bench_shape<float>(s, threads, peak, min_seconds);
  }
  for (int threads : {1, 2}) bench_shape<double>(shapes[0], threads, peak, min_seconds);
  std::printf("\npeak used for the fractions (best seen during the run): %.1f GFLOP/s f32 per core\n", peak);
  return 0;
}
