// POST /v1/chat/completions and /v1/completions: request to jobs, jobs to a whole response or an event stream.
#include <httplib.h>

#include <ctime>
#include <mutex>
#include <random>

#include "serve_http.h"
#include "serve_responses.h"

namespace nxrt::serve {

namespace {

using nlohmann::json;

std::string response_id(bool chat) {
  static std::mutex mutex;
  static std::mt19937_64 random{std::random_device{}()};
  std::lock_guard lock(mutex);
  char hex[25];
  std::snprintf(hex, sizeof hex, "%012llx%012llx", static_cast<unsigned long long>(random() & 0xffffffffffffULL),
                static_cast<unsigned long long>(random() & 0xffffffffffffULL));
  return (chat ? "chatcmpl-" : "cmpl-") + std::string(hex);
}

// The prompts of the request as token ids (and as text, for echo).
std::optional<ApiError> prompt_tokens(const CompletionRequest& r, const ServerState& state,
                                      std::vector<std::vector<int32_t>>& ids, std::vector<std::string>& texts) {
  const genai::Tokenizer* tokenizer = state.model->tokenizer();
  if (r.prompt_is_ids) {
    ids = r.prompt_ids;
    for (const auto& p : ids) {
      auto text = tokenizer != nullptr ? tokenizer->decode(p, false) : Expected<std::string>(std::string());
      texts.push_back(text ? *text : std::string());
    }
    return std::nullopt;
  }
  if (tokenizer == nullptr) return ApiError{400, "the model folder has no tokenizer.json; send token ids", "invalid_request_error", "", ""};
  if (r.chat) {
    if (!state.formatter) return ApiError{400, "the model folder has no chat template; use /v1/completions", "invalid_request_error", "messages", ""};
    auto text = state.formatter->apply(r.messages_json, true);
    if (!text) return ApiError{400, "the chat template failed on these messages: " + text.status().message(),
                               "invalid_request_error", "messages", ""};
    auto encoded = tokenizer->encode(*text, false);
    if (!encoded) return ApiError{400, encoded.status().message(), "invalid_request_error", "messages", ""};
    ids.push_back(std::move(*encoded));
    texts.push_back(std::move(*text));
    return std::nullopt;
  }
  for (const std::string& text : r.prompt_texts) {
    auto encoded = tokenizer->encode(text, true);
    if (!encoded) return ApiError{400, encoded.status().message(), "invalid_request_error", "prompt", ""};
    ids.push_back(std::move(*encoded));
    texts.push_back(text);
  }
  return std::nullopt;
}

std::optional<ApiError> make_jobs(const CompletionRequest& r, const std::vector<std::vector<int32_t>>& prompts,
                                  const ServerState& state, std::vector<std::shared_ptr<Job>>& jobs) {
  const int64_t context = state.served.context_length;
  for (size_t p = 0; p < prompts.size(); ++p) {
    const int64_t length = static_cast<int64_t>(prompts[p].size());
    const int64_t room = context - length;
    if (length == 0) return ApiError{400, "the prompt has no tokens", "invalid_request_error", r.chat ? "messages" : "prompt", ""};
    if (room < 1 || (r.max_tokens && *r.max_tokens > room)) {
      return ApiError{400,
                      "This model's maximum context length is " + std::to_string(context) + " tokens. However, you " +
                          "requested " + std::to_string(length + r.max_tokens.value_or(1)) + " tokens (" +
                          std::to_string(length) + " in the prompt, " + std::to_string(r.max_tokens.value_or(1)) +
                          " for the completion).",
                      "invalid_request_error", r.chat ? "messages" : "prompt", "context_length_exceeded"};
    }
    for (const int32_t t : prompts[p]) {
      if (t < 0 || t >= state.served.vocab_size) {
        return ApiError{400, "the prompt's token " + std::to_string(t) + " is outside the model's vocabulary [0, " +
                                 std::to_string(state.served.vocab_size) + ")",
                        "invalid_request_error", r.chat ? "messages" : "prompt", ""};
      }
    }
    auto job = std::make_shared<Job>();
    job->prompt = prompts[p];
    job->n = r.n;
    job->stop = r.stop;
    genai::BatchEngine::SequenceOptions& o = job->options;
    o.max_new_tokens = r.max_tokens.value_or(room);
    o.search.do_sample = r.temperature > 0.0;
    o.search.temperature = r.temperature > 0.0 ? r.temperature : 1.0;
    o.search.top_p = r.top_p;
    o.search.top_k = r.top_k;
    o.search.min_p = r.min_p;
    o.search.presence_penalty = r.presence_penalty;
    o.search.frequency_penalty = r.frequency_penalty;
    o.search.repetition_penalty = r.repetition_penalty;
    if (r.seed) o.search.random_seed = *r.seed + p * static_cast<uint64_t>(r.n);
    o.logit_bias = r.logit_bias;
    o.top_logprobs = r.logprobs;
    jobs.push_back(std::move(job));
  }
  return std::nullopt;
}

// Prompt tokens whose cache the engine reused, over a request's jobs (usage.prompt_tokens_details).
int64_t cached_tokens(const std::vector<std::shared_ptr<Job>>& jobs) {
  int64_t total = 0;
  for (const auto& job : jobs) total += job->cached_tokens;
  return total;
}

struct StreamState {
  std::vector<std::shared_ptr<Job>> jobs;
  ResponseWriter writer;
  int64_t n = 1, prompt_tokens = 0;
  bool chat = false, with_logprobs = false, include_usage = false, started = false;
  std::vector<std::string> echo;       // per prompt, completions with echo
  std::vector<int64_t> generated;      // per choice
  std::vector<size_t> text_offset;     // per choice
  std::shared_ptr<void> in_flight;     // counts the request until the stream ends
  void cancel() {
    for (const auto& job : jobs) job->cancel();
  }
};

// One round of the event stream: what the jobs produced since the last round. False when the client is gone.
bool write_stream_round(StreamState& s, httplib::DataSink& sink) {
  const auto send = [&](const std::string& data) { return sink.write(data.data(), data.size()); };
  if (!s.started) {
    s.started = true;
    for (size_t p = 0; p < s.jobs.size(); ++p) {
      for (int64_t i = 0; i < s.n; ++i) {
        const int64_t index = static_cast<int64_t>(p) * s.n + i;
        if (s.chat && !send(ResponseWriter::event(s.writer.role_chunk(index)))) return false;
        if (!s.echo.empty() && !send(ResponseWriter::event(s.writer.text_chunk(index, s.echo[p], {}, false, 0)))) {
          return false;
        }
      }
    }
  }
  bool all_done = true;
  const auto wait = std::chrono::milliseconds(s.jobs.size() == 1 ? 500 : 20);
  for (size_t p = 0; p < s.jobs.size(); ++p) {
    Job& job = *s.jobs[p];
    for (const ChoiceEvent& e : job.take(wait)) {
      const int64_t index = static_cast<int64_t>(p) * s.n + e.choice;
      s.generated[static_cast<size_t>(index)] = e.generated;
      if (!e.text.empty() || !e.tokens.empty()) {
        size_t& offset = s.text_offset[static_cast<size_t>(index)];
        if (!send(ResponseWriter::event(s.writer.text_chunk(index, e.text, e.tokens, s.with_logprobs, offset)))) {
          return false;
        }
        offset += e.text.size();
      }
      if (!e.finish.empty() && !send(ResponseWriter::event(s.writer.finish_chunk(index, e.finish)))) return false;
    }
    const std::string error = job.error();
    if (!error.empty()) {
      send(ResponseWriter::event(json::parse(error_body({500, error, "server_error", "", ""}))));
      send("data: [DONE]\n\n");
      sink.done();
      return true;
    }
    if (!job.finished()) all_done = false;
  }
  if (!all_done) return true;
  int64_t completion_tokens = 0;
  for (const int64_t g : s.generated) completion_tokens += g;
  if (s.include_usage &&
      !send(ResponseWriter::event(s.writer.usage_chunk(s.prompt_tokens, completion_tokens, cached_tokens(s.jobs))))) {
    return false;
  }
  if (!send("data: [DONE]\n\n")) return false;
  sink.done();
  return true;
}

// Status logged for a request whose client left before its answer (nginx's "client closed request").
constexpr int kClientClosedRequest = 499;

void respond_whole(const CompletionRequest& r, const std::vector<std::shared_ptr<Job>>& jobs,
                   const std::vector<std::string>& echo, ResponseWriter& writer, int64_t prompt_tokens,
                   ConnectionWatch& connection, httplib::Response& response) {
  // The client is first asked after a short answer's time, then at this interval, so short requests never look.
  constexpr auto kCheckEvery = std::chrono::milliseconds(200);
  auto next_check = std::chrono::steady_clock::now() + kCheckEvery;
  std::vector<FinishedChoice> choices(jobs.size() * static_cast<size_t>(r.n));
  for (size_t p = 0; p < jobs.size(); ++p) {
    for (int64_t i = 0; i < r.n && r.echo; ++i) choices[p * static_cast<size_t>(r.n) + static_cast<size_t>(i)].text = echo[p];
    while (true) {
      if (std::chrono::steady_clock::now() >= next_check) {
        next_check = std::chrono::steady_clock::now() + kCheckEvery;
        if (connection.client_gone()) {
          for (const auto& job : jobs) job->cancel();
          response.status = kClientClosedRequest;
          return;
        }
      }
      for (ChoiceEvent& e : jobs[p]->take(kCheckEvery)) {
        FinishedChoice& c = choices[p * static_cast<size_t>(r.n) + static_cast<size_t>(e.choice)];
        c.text += e.text;
        c.tokens.insert(c.tokens.end(), e.tokens.begin(), e.tokens.end());
        c.generated = e.generated;
        if (!e.finish.empty()) c.finish = e.finish;
      }
      const std::string error = jobs[p]->error();
      if (!error.empty()) {
        for (const auto& job : jobs) job->cancel();
        return send_error(response, {500, error, "server_error", "", ""});
      }
      if (jobs[p]->finished()) break;
    }
  }
  const json body = writer.response(choices, prompt_tokens, cached_tokens(jobs));
  response.status = 200;
  response.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

}  // namespace

void handle_completion(const httplib::Request& request, httplib::Response& response, ServerState& state, bool chat) {
  if (!state.ready || state.stopping) {
    response.set_header("Retry-After", "1");
    return send_error(response, {503, state.stopping ? "the server is shutting down" : "the model is still loading",
                                 "server_error", "", ""});
  }
  ++state.in_flight;
  std::shared_ptr<void> in_flight(nullptr, [&state](void*) { --state.in_flight; });
  CompletionRequest r;
  if (auto e = parse_completion_request(request.body, chat, state.served, r)) return send_error(response, *e);
  std::vector<std::vector<int32_t>> prompts;
  std::vector<std::string> texts;
  if (auto e = prompt_tokens(r, state, prompts, texts)) return send_error(response, *e);
  std::vector<std::shared_ptr<Job>> jobs;
  if (auto e = make_jobs(r, prompts, state, jobs)) return send_error(response, *e);
  const Scheduler::Admission admission = state.scheduler->submit(jobs);
  if (admission != Scheduler::Admission::kQueued) {
    response.set_header("Retry-After", "1");
    if (admission == Scheduler::Admission::kQueueFull) {
      return send_error(response, {429, "the server's queue is full; retry later", "rate_limit_error", "",
                                   "queue_full"});
    }
    return send_error(response, {503, "the server is shutting down", "server_error", "", ""});
  }
  int64_t prompt_count = 0;
  for (const auto& p : prompts) prompt_count += static_cast<int64_t>(p.size());
  ResponseHead head{chat, response_id(chat), r.model, static_cast<int64_t>(std::time(nullptr)), r.include_usage};
  ResponseWriter writer(head, state.model->tokenizer());
  if (!r.stream) {
    ConnectionWatch connection(request);
    return respond_whole(r, jobs, texts, writer, prompt_count, connection, response);
  }
  auto stream = std::make_shared<StreamState>(StreamState{jobs, writer, r.n, prompt_count, chat, r.logprobs >= 0,
                                                          r.include_usage, false, r.echo ? texts : std::vector<std::string>{},
                                                          std::vector<int64_t>(jobs.size() * static_cast<size_t>(r.n), 0),
                                                          std::vector<size_t>(jobs.size() * static_cast<size_t>(r.n), 0),
                                                          in_flight});
  response.set_header("Cache-Control", "no-cache");
  response.set_chunked_content_provider(
      "text/event-stream",
      [stream](size_t, httplib::DataSink& sink) {
        if (write_stream_round(*stream, sink)) return true;
        stream->cancel();
        return false;
      },
      [stream](bool success) {
        if (!success) stream->cancel();
      });
}

}  // namespace nxrt::serve
