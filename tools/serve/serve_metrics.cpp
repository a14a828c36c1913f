// Prometheus text of the server's counters (contracts in serve_metrics.h).
#include "serve_metrics.h"

#include <sstream>

namespace nxrt::serve {

void Histogram::observe(double seconds) {
  std::lock_guard lock(mutex_);
  for (size_t i = 0; i < kBounds.size(); ++i) {
    if (seconds <= kBounds[i]) {
      ++counts_[i];
      break;
    }
  }
  ++count_;
  sum_ += seconds;
}

std::string Histogram::text(const std::string& name, const std::string& help) const {
  std::lock_guard lock(mutex_);
  std::ostringstream out;
  out << "# HELP " << name << " " << help << "\n# TYPE " << name << " histogram\n";
  uint64_t cumulative = 0;
  for (size_t i = 0; i < kBounds.size(); ++i) {
    cumulative += counts_[i];
    out << name << "_bucket{le=\"" << kBounds[i] << "\"} " << cumulative << "\n";
  }
  out << name << "_bucket{le=\"+Inf\"} " << count_ << "\n" << name << "_sum " << sum_ << "\n" << name << "_count "
      << count_ << "\n";
  return out.str();
}

void Metrics::count_request(const std::string& route, int status) {
  std::lock_guard lock(mutex_);
  ++requests_[{route, status}];
}

std::string Metrics::text() const {
  std::ostringstream out;
  out << "# HELP nxrt_requests_total HTTP requests answered, by route and status.\n"
      << "# TYPE nxrt_requests_total counter\n";
  {
    std::lock_guard lock(mutex_);
    for (const auto& [key, count] : requests_) {
      out << "nxrt_requests_total{route=\"" << key.first << "\",status=\"" << key.second << "\"} " << count << "\n";
    }
  }
  const auto counter = [&](const char* name, const char* help, uint64_t value) {
    out << "# HELP " << name << " " << help << "\n# TYPE " << name << " counter\n" << name << " " << value << "\n";
  };
  const auto gauge = [&](const char* name, const char* help, double value) {
    out << "# HELP " << name << " " << help << "\n# TYPE " << name << " gauge\n" << name << " " << value << "\n";
  };
  counter("nxrt_prompt_tokens_total", "Prompt tokens of admitted requests.", prompt_tokens.load());
  counter("nxrt_prompt_tokens_reused_total", "Prompt tokens whose cache came from a kept prefix.",
          prompt_tokens_reused.load());
  counter("nxrt_generation_tokens_total", "Tokens generated.", generated_tokens.load());
  counter("nxrt_decode_steps_total", "Batched decoder steps run.", decode_steps.load());
  counter("nxrt_prefill_runs_total", "Decoder runs that prefilled prompts (prompts joining together share one).",
          prefill_runs.load());
  const double seconds = decode_seconds.load();
  out << "# HELP nxrt_decode_seconds_total Wall time of the batched decoder steps (prefills included).\n"
      << "# TYPE nxrt_decode_seconds_total counter\nnxrt_decode_seconds_total " << seconds << "\n";
  gauge("nxrt_generation_tokens_per_second", "Generated tokens per second of decoding, since start.",
        seconds > 0 ? static_cast<double>(generated_tokens.load()) / seconds : 0.0);
  gauge("nxrt_queue_depth", "Requests waiting for a batch slot.", static_cast<double>(queue_depth.load()));
  gauge("nxrt_batch_size", "Sequences in the running batch.", static_cast<double>(batch_size.load()));
  gauge("nxrt_free_slots", "Batch slots free.", static_cast<double>(free_slots.load()));
  gauge("nxrt_running_requests", "Requests admitted and not finished.", static_cast<double>(running_requests.load()));
  out << latency.text("nxrt_request_latency_seconds", "Time from a request's arrival to its last token.");
  out << first_token.text("nxrt_time_to_first_token_seconds", "Time from a request's arrival to its first token.");
  return out.str();
}

}  // namespace nxrt::serve
