// The decode loop of `nxrt serve`: one thread owns a genai::BatchEngine; HTTP handler threads submit Jobs (one
// prompt with n choices) to a bounded queue, and the loop admits them into the running batch as slots free up,
// runs one batched decoder step at a time, turns each picked token into text (stop strings cut the text and end
// the choice), and hands the text to the job's waiting handler. A cancelled job (client gone, shutdown) leaves
// the batch at the next step.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "genai/batch_engine.h"
#include "serve_metrics.h"

namespace nxrt::serve {

using Clock = std::chrono::steady_clock;

struct TokenInfo {
  int32_t id = 0;
  float logprob = 0.0f;
  std::vector<std::pair<int32_t, float>> top;
};

// New output of one choice.
struct ChoiceEvent {
  int64_t choice = 0;
  std::string text;               // text that no stop string can still claim
  std::vector<TokenInfo> tokens;  // the tokens picked, when log-probabilities were asked
  std::string finish;             // "", "stop" or "length"
  int64_t generated = 0;          // tokens this choice generated so far
};

class Job {
 public:
  std::vector<int32_t> prompt;
  int64_t n = 1;
  genai::BatchEngine::SequenceOptions options;
  std::vector<std::string> stop;
  Clock::time_point arrived = Clock::now();
  // Prompt tokens whose cache the engine reused; set when the job is admitted, before its first output.
  std::atomic<int64_t> cached_tokens{0};

  // Waits up to `timeout` for output; returns what came (possibly nothing).
  std::vector<ChoiceEvent> take(std::chrono::milliseconds timeout);
  // Every choice finished, or the job failed.
  bool finished() const;
  // Why the job failed (empty: it did not).
  std::string error() const;
  // Asks the scheduler to drop the job at its next step.
  void cancel() { cancelled_ = true; }
  bool cancelled() const { return cancelled_; }

 private:
  friend class Scheduler;
  void push(ChoiceEvent event);
  bool all_choices_done() const;
  void fail(const std::string& message);

  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<ChoiceEvent> events_;
  int64_t finished_choices_ = 0;
  std::string error_;
  std::atomic<bool> cancelled_{false};
  bool first_token_seen_ = false;
};

class Scheduler {
 public:
  Scheduler(std::shared_ptr<const genai::Model> model, std::unique_ptr<genai::BatchEngine> engine, int64_t max_queue,
            Metrics& metrics);
  ~Scheduler();

  enum class Admission { kQueued, kQueueFull, kStopping };
  // Queues all of a request's jobs or none (kQueueFull when they do not all fit), so that they join together.
  Admission submit(const std::vector<std::shared_ptr<Job>>& jobs);
  // Fails every queued and running job (shutdown after the grace period).
  void cancel_all(const std::string& why);
  // Accepts no more jobs; the loop ends once nothing is queued or running. Joins the thread.
  void stop();
  int64_t queued() const;

 private:
  struct Choice {
    int64_t sequence = 0;
    std::shared_ptr<Job> job;
    int64_t index = 0;
    std::unique_ptr<genai::TokenizerStream> stream;
    std::string held;  // decoded text not yet handed out (a stop string may still start in it)
    std::vector<int32_t> tokens;  // generated, the end-of-sequence id excluded
    size_t decoded = 0;           // bytes of text the stream gave for them
    int64_t generated = 0;
  };

  void loop();
  // Joins the jobs' prompts to the batch in one engine call (prompts prefilled together where the engine can).
  void admit(const std::vector<std::shared_ptr<Job>>& jobs);
  void step();
  // Turns one pick into the choice's event; true when the choice ends.
  bool deliver(Choice& choice, const genai::BatchEngine::Pick& pick);
  void drop_cancelled();

  std::shared_ptr<const genai::Model> model_;
  std::unique_ptr<genai::BatchEngine> engine_;
  int64_t max_queue_;
  Metrics& metrics_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Job>> queue_;
  std::vector<std::shared_ptr<Job>> admitted_;  // running jobs, for cancel_all
  bool stopping_ = false;
  std::vector<Choice> running_;  // loop thread only
  std::thread thread_;
};

}  // namespace nxrt::serve
