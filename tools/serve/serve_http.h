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
// Whether the client of a request has closed its connection, for handlers that answer only at the end.
// cpp-httplib 0.11 hands handlers no socket, so the socket is looked up once, on the first question, among the
// process's descriptors by the request's local and remote addresses (unique while the handler runs, which owns it).
class ConnectionWatch {
 public:
  explicit ConnectionWatch(const httplib::Request& request) : request_(request) {}
  // True once the peer has closed or reset the connection; false while it is open or when no socket matches.
  bool client_gone();

 private:
  const httplib::Request& request_;
  int socket_ = -2;  // -2: not looked up yet; -1: no descriptor matched
};

// The two completion routes (serve_completions.cpp).
void handle_completion(const httplib::Request& request, httplib::Response& response, ServerState& state, bool chat);
// Writes `error` as the response.
void send_error(httplib::Response& response, const ApiError& error);
}  // namespace nxrt::serve
