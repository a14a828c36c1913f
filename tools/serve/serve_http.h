// The HTTP routes of `nxrt serve` on cpp-httplib: the OpenAI routes (POST /v1/chat/completions, /v1/completions,
// GET /v1/models), GET /health (200 when the model is loaded, 503 before), POST /tokenize, POST /detokenize and
// GET /metrics; the bearer-token check, JSON error bodies for every error (httplib's own included) and one JSON
// access-log line per request on stderr.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "genai/chat.h"
#include "genai/generator.h"
#include "serve_metrics.h"
#include "serve_request.h"
#include "serve_scheduler.h"

namespace httplib {
class Server;
}

namespace nxrt::serve {

struct ServerState {
  std::string api_key;  // empty: any request is accepted
  bool access_log = true;
  ServedModel served;
  std::atomic<bool> ready{false}, stopping{false};
  std::atomic<int64_t> in_flight{0};  // completion requests not yet fully answered
  // Set once before `ready`, read-only afterwards.
  std::shared_ptr<const genai::Model> model;
  std::optional<genai::ChatFormatter> formatter;
  std::unique_ptr<Scheduler> scheduler;
  Metrics metrics;
};

void install_routes(httplib::Server& server, ServerState& state);

}  // namespace nxrt::serve

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace nxrt::serve {
// The two completion routes (serve_completions.cpp).
void handle_completion(const httplib::Request& request, httplib::Response& response, ServerState& state, bool chat);
// Writes `error` as the response.
void send_error(httplib::Response& response, const ApiError& error);
}  // namespace nxrt::serve
