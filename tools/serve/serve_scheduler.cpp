// The server's decode loop (contracts in serve_scheduler.h).
#include "serve_scheduler.h"

#include <algorithm>

namespace nxrt::serve {

std::vector<ChoiceEvent> Job::take(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  ready_.wait_for(lock, timeout, [&] { return !events_.empty() || finished_choices_ >= n || !error_.empty(); });
  std::vector<ChoiceEvent> out(std::make_move_iterator(events_.begin()), std::make_move_iterator(events_.end()));
  events_.clear();
  return out;
}

bool Job::finished() const {
  std::lock_guard lock(mutex_);
  return (finished_choices_ >= n && events_.empty()) || !error_.empty();
}

std::string Job::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

bool Job::all_choices_done() const {
  std::lock_guard lock(mutex_);
  return finished_choices_ >= n || !error_.empty();
}

void Job::push(ChoiceEvent event) {
  {
    std::lock_guard lock(mutex_);
    if (!event.finish.empty()) ++finished_choices_;
    events_.push_back(std::move(event));
  }
  ready_.notify_all();
}

void Job::fail(const std::string& message) {
  {
    std::lock_guard lock(mutex_);
    if (error_.empty() && finished_choices_ < n) error_ = message;
  }
  ready_.notify_all();
}

Scheduler::Scheduler(std::shared_ptr<const genai::Model> model, std::unique_ptr<genai::BatchEngine> engine,
                     int64_t max_queue, Metrics& metrics)
    : model_(std::move(model)), engine_(std::move(engine)), max_queue_(max_queue), metrics_(metrics) {
  metrics_.free_slots = engine_->free_slots();
  thread_ = std::thread([this] { loop(); });
}

Scheduler::~Scheduler() { stop(); }

Scheduler::Admission Scheduler::submit(const std::vector<std::shared_ptr<Job>>& jobs) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return Admission::kStopping;
    if (static_cast<int64_t>(queue_.size() + jobs.size()) > max_queue_) return Admission::kQueueFull;
    queue_.insert(queue_.end(), jobs.begin(), jobs.end());
    metrics_.queue_depth = static_cast<int64_t>(queue_.size());
  }
  wake_.notify_one();
  return Admission::kQueued;
}

int64_t Scheduler::queued() const {
  std::lock_guard lock(mutex_);
  return static_cast<int64_t>(queue_.size());
}

void Scheduler::cancel_all(const std::string& why) {
  {
    std::lock_guard lock(mutex_);
    for (const auto& job : queue_) {
      job->fail(why);
      job->cancel();
    }
    for (const auto& job : admitted_) {
      job->fail(why);
      job->cancel();
    }
  }
  wake_.notify_one();
}

void Scheduler::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void Scheduler::loop() {
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [&] { return stopping_ || !queue_.empty() || !running_.empty(); });
    if (stopping_ && queue_.empty() && running_.empty()) break;
    std::vector<std::shared_ptr<Job>> joining;
    int64_t free = engine_->free_slots();
    while (!queue_.empty() && (queue_.front()->cancelled() || free >= queue_.front()->n)) {
      std::shared_ptr<Job> job = std::move(queue_.front());
      queue_.pop_front();
      metrics_.queue_depth = static_cast<int64_t>(queue_.size());
      if (job->cancelled()) continue;
      free -= job->n;
      admitted_.push_back(job);
      joining.push_back(std::move(job));
    }
    lock.unlock();
    if (!joining.empty()) admit(joining);
    drop_cancelled();
    if (!running_.empty()) step();
    metrics_.batch_size = engine_->active();
    metrics_.free_slots = engine_->free_slots();
    lock.lock();
    std::erase_if(admitted_, [](const std::shared_ptr<Job>& job) { return job->all_choices_done() || job->cancelled(); });
    metrics_.running_requests = static_cast<int64_t>(admitted_.size());
  }
}

void Scheduler::admit(const std::vector<std::shared_ptr<Job>>& jobs) {
  std::vector<genai::BatchEngine::NewSequence> sequences;
  for (const auto& job : jobs) sequences.push_back({job->prompt, job->n, job->options});
  std::vector<Expected<genai::BatchEngine::Added>> added = engine_->add_all(sequences);
  metrics_.prefill_runs = static_cast<uint64_t>(engine_->prefill_runs());
  for (size_t j = 0; j < jobs.size(); ++j) {
    const std::shared_ptr<Job>& job = jobs[j];
    if (!added[j]) {
      job->fail(added[j].status().message());
      continue;
    }
    metrics_.prompt_tokens += job->prompt.size();
    job->cached_tokens = added[j]->reused_tokens;
    metrics_.prompt_tokens_reused += static_cast<uint64_t>(added[j]->reused_tokens);
    for (int64_t i = 0; i < job->n; ++i) {
      Choice choice;
      choice.sequence = added[j]->ids[static_cast<size_t>(i)];
      choice.job = job;
      choice.index = i;
      if (model_->tokenizer() != nullptr) {
        choice.stream = std::make_unique<genai::TokenizerStream>(*model_->tokenizer());
      }
      running_.push_back(std::move(choice));
    }
  }
}

void Scheduler::drop_cancelled() {
  std::erase_if(running_, [&](const Choice& c) {
    if (!c.job->cancelled()) return false;
    engine_->remove(c.sequence);
    return true;
  });
}

bool Scheduler::deliver(Choice& choice, const genai::BatchEngine::Pick& pick) {
  ChoiceEvent event;
  event.choice = choice.index;
  ++choice.generated;
  event.generated = choice.generated;
  if (pick.finish != genai::BatchEngine::Finish::kEndOfSequence && choice.stream != nullptr) {
    choice.tokens.push_back(pick.token);
    auto piece = choice.stream->decode_next(pick.token);
    if (piece) {
      choice.held += *piece;
      choice.decoded += piece->size();
    }
  }
  if (pick.finish != genai::BatchEngine::Finish::kNone && model_->tokenizer() != nullptr) {
    // The stream holds back an unfinished UTF-8 character; at the end the text is what decoding every token gives.
    auto whole = model_->tokenizer()->decode(choice.tokens, true);
    if (whole && whole->size() > choice.decoded) choice.held += whole->substr(choice.decoded);
  }
  if (choice.job->options.top_logprobs >= 0) {
    event.tokens.push_back({pick.token, pick.logprobs.logprob, pick.logprobs.top});
  }
  // The earliest stop string ends the choice there; otherwise hand out all but a tail that could start one.
  size_t cut = std::string::npos;
  for (const std::string& s : choice.job->stop) cut = std::min(cut, choice.held.find(s));
  size_t keep = 0;
  if (cut != std::string::npos) {
    event.finish = "stop";
    choice.held.resize(cut);
  } else if (pick.finish == genai::BatchEngine::Finish::kEndOfSequence) {
    event.finish = "stop";
  } else if (pick.finish == genai::BatchEngine::Finish::kLength) {
    event.finish = "length";
  } else {
    for (const std::string& s : choice.job->stop) {
      for (size_t k = std::min(s.size() - 1, choice.held.size()); k > keep; --k) {
        if (choice.held.compare(choice.held.size() - k, k, s, 0, k) == 0) {
          keep = k;
          break;
        }
      }
    }
  }
  event.text = choice.held.substr(0, choice.held.size() - keep);
  choice.held.erase(0, choice.held.size() - keep);
  const bool ends = !event.finish.empty();
  Job& job = *choice.job;
  {
    std::lock_guard lock(job.mutex_);
    if (!job.first_token_seen_) {
      job.first_token_seen_ = true;
      metrics_.first_token.observe(std::chrono::duration<double>(Clock::now() - job.arrived).count());
    }
  }
  job.push(std::move(event));
  return ends;
}

void Scheduler::step() {
  const auto start = Clock::now();
  auto picks = engine_->pick();
  if (!picks) {
    for (Choice& c : running_) {
      c.job->fail(picks.status().message());
      engine_->remove(c.sequence);
    }
    running_.clear();
    return;
  }
  metrics_.generated_tokens += picks->size();
  for (const auto& pick : *picks) {
    const auto it = std::find_if(running_.begin(), running_.end(), [&](const Choice& c) { return c.sequence == pick.id; });
    if (it == running_.end()) continue;
    if (deliver(*it, pick)) {
      engine_->remove(it->sequence);
      if (it->job->all_choices_done()) {
        metrics_.latency.observe(std::chrono::duration<double>(Clock::now() - it->job->arrived).count());
      }
      running_.erase(it);
    }
  }
  const Status advanced = engine_->advance();
  if (!advanced.is_ok()) {
    for (Choice& c : running_) c.job->fail(advanced.message());
    running_.clear();
  }
  ++metrics_.decode_steps;
  metrics_.decode_seconds = metrics_.decode_seconds + std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace nxrt::serve
