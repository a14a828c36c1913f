// Counters of `nxrt serve`, shown on GET /metrics in the Prometheus text format (version 0.0.4): requests by route
// and status, prompt and generated tokens, the decode rate, queue depth, batch size and free slots, and
// histograms of request latency and time to first token. Every member is safe to update from any thread.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace nxrt::serve {

class Histogram {
 public:
  static constexpr std::array<double, 14> kBounds = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                                     1.0,   2.5,  5.0,   10.0, 30.0, 60.0, 120.0};
  void observe(double seconds);
  // The histogram's lines for metric `name`.
  std::string text(const std::string& name, const std::string& help) const;

 private:
  mutable std::mutex mutex_;
  std::array<uint64_t, kBounds.size()> counts_{};  // per bound, not cumulative
  uint64_t count_ = 0;
  double sum_ = 0.0;
};

struct Metrics {
  std::atomic<uint64_t> prompt_tokens{0}, generated_tokens{0}, decode_steps{0}, prefill_runs{0};
  std::atomic<uint64_t> prompt_tokens_reused{0};  // of prompt_tokens: taken from a kept prefix, not prefilled
  std::atomic<int64_t> queue_depth{0}, batch_size{0}, free_slots{0}, running_requests{0};
  std::atomic<double> decode_seconds{0.0};  // time spent in decoder steps (for tokens per second)
  Histogram latency, first_token;

  void count_request(const std::string& route, int status);
  // The whole /metrics page.
  std::string text() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;
};

}  // namespace nxrt::serve
