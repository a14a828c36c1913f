// Routes, authentication, error bodies and the access log of `nxrt serve` (contracts in serve_http.h).
#include "serve_http.h"

#include <dirent.h>
#include <httplib.h>
#include <netdb.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>

namespace nxrt::serve {

namespace {

using nlohmann::json;

thread_local std::chrono::steady_clock::time_point request_start;

void send_json(httplib::Response& response, int status, const json& body) {
  response.status = status;
  response.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

bool not_ready(const ServerState& state, httplib::Response& response) {
  if (state.ready) return false;
  response.set_header("Retry-After", "1");
  send_error(response, {503, "the model is still loading", "server_error", "", "model_loading"});
  return true;
}

// The route label of /metrics: the fixed routes by name, anything else as "other".
std::string route_label(const std::string& path) {
  for (const char* route : {"/v1/chat/completions", "/v1/completions", "/v1/models", "/health", "/tokenize",
                            "/detokenize", "/metrics"}) {
    if (path == route) return route;
  }
  return path.rfind("/v1/models/", 0) == 0 ? "/v1/models" : "other";
}

void log_request(ServerState& state, const httplib::Request& request, const httplib::Response& response) {
  state.metrics.count_request(route_label(request.path), response.status);
  if (!state.access_log) return;
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - request_start).count();
  const json line = {{"time", static_cast<int64_t>(std::time(nullptr))},
                     {"remote", request.remote_addr + ":" + std::to_string(request.remote_port)},
                     {"method", request.method},
                     {"path", request.path},
                     {"status", response.status},
                     {"ms", static_cast<int64_t>(ms * 1000) / 1000.0}};
  static std::mutex log_mutex;
  std::lock_guard lock(log_mutex);
  std::cerr << line.dump(-1, ' ', false, json::error_handler_t::replace) << "\n" << std::flush;
}

json model_card(const ServerState& state) {
  return {{"id", state.served.id}, {"object", "model"}, {"created", 0}, {"owned_by", "nxrt"},
          {"max_model_len", state.served.context_length}};
}

void tokenize(const httplib::Request& request, httplib::Response& response, ServerState& state) {
  if (not_ready(state, response)) return;
  TokenizeRequest parsed;
  if (auto e = parse_tokenize_request(request.body, parsed)) return send_error(response, *e);
  if (state.model->tokenizer() == nullptr) {
    return send_error(response, {400, "the model folder has no tokenizer.json", "invalid_request_error", "", ""});
  }
  auto ids = state.model->tokenizer()->encode(parsed.text, parsed.add_special_tokens);
  if (!ids) return send_error(response, {400, ids.status().message(), "invalid_request_error", parsed.field, ""});
  send_json(response, 200, {{"tokens", *ids}, {"count", ids->size()}, {"max_model_len", state.served.context_length}});
}

void detokenize(const httplib::Request& request, httplib::Response& response, ServerState& state) {
  if (not_ready(state, response)) return;
  std::vector<int32_t> tokens;
  if (auto e = parse_token_field(request.body, state.served, tokens)) return send_error(response, *e);
  if (state.model->tokenizer() == nullptr) {
    return send_error(response, {400, "the model folder has no tokenizer.json", "invalid_request_error", "", ""});
  }
  auto text = state.model->tokenizer()->decode(tokens, false);
  if (!text) return send_error(response, {400, text.status().message(), "invalid_request_error", "tokens", ""});
  send_json(response, 200, {{"prompt", *text}});
}

// The numeric host and the port of a socket address, as cpp-httplib writes them into a request.
bool address_matches(const sockaddr_storage& address, socklen_t length, const std::string& host, int port) {
  char text[NI_MAXHOST], service[NI_MAXSERV];
  if (address.ss_family != AF_INET && address.ss_family != AF_INET6) return false;
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&address), length, text, sizeof text, service, sizeof service,
                  NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    return false;
  }
  return std::atoi(service) == port && host == text;
}

// The descriptor of the TCP connection between the two addresses, or -1.
int find_connection_socket(const httplib::Request& request) {
  DIR* descriptors = opendir("/proc/self/fd");
  if (descriptors == nullptr) return -1;
  int found = -1;
  while (const dirent* entry = readdir(descriptors)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || fd == dirfd(descriptors)) continue;
    sockaddr_storage local{}, remote{};
    socklen_t local_length = sizeof local, remote_length = sizeof remote;
    if (getsockname(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&local), &local_length) != 0 ||
        getpeername(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&remote), &remote_length) != 0) {
      continue;
    }
    if (address_matches(remote, remote_length, request.remote_addr, request.remote_port) &&
        address_matches(local, local_length, request.local_addr, request.local_port)) {
      found = static_cast<int>(fd);
      break;
    }
  }
  closedir(descriptors);
  return found;
}

}  // namespace

bool ConnectionWatch::client_gone() {
  if (socket_ == -2) socket_ = find_connection_socket(request_);
  if (socket_ < 0) return false;
  char byte;
  const ssize_t peeked = recv(socket_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (peeked > 0) return false;  // the client already sent more (a pipelined request): still there
  if (peeked == 0) return true;  // orderly close
  return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
}

void send_error(httplib::Response& response, const ApiError& error) {
  response.status = error.status;
  response.set_content(error_body(error), "application/json");
}

void install_routes(httplib::Server& server, ServerState& state) {
  server.set_pre_routing_handler([&state](const httplib::Request& request, httplib::Response& response) {
    request_start = std::chrono::steady_clock::now();
    if (state.api_key.empty() || request.path == "/health") return httplib::Server::HandlerResponse::Unhandled;
    if (request.get_header_value("Authorization") == "Bearer " + state.api_key) {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    send_error(response, {401, "Incorrect API key provided (Authorization: Bearer KEY)", "invalid_request_error", "",
                          "invalid_api_key"});
    return httplib::Server::HandlerResponse::Handled;
  });
  // httplib's own errors (unknown route, 413, malformed HTTP) get an OpenAI error body; ours already have one.
  server.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request& request,
                                                                   httplib::Response& response) {
    if (!response.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    const int status = response.status;
    std::string message = status == 404   ? "no route " + request.method + " " + request.path
                          : status == 413 ? "the request body is larger than the server accepts"
                          : status == 405 ? "method not allowed"
                                          : "the request is malformed";
    send_error(response, {status, message, "invalid_request_error", "", ""});
    return httplib::Server::HandlerResponse::Handled;
  }));
  server.set_exception_handler([](const httplib::Request&, httplib::Response& response, std::exception_ptr error) {
    std::string what = "internal error";
    try {
      if (error) std::rethrow_exception(error);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    send_error(response, {500, what, "server_error", "", ""});
  });
  server.set_logger([&state](const httplib::Request& request, const httplib::Response& response) {
    log_request(state, request, response);
  });

  server.Get("/health", [&state](const httplib::Request&, httplib::Response& response) {
    if (state.stopping) return send_json(response, 503, {{"status", "stopping"}});
    send_json(response, state.ready ? 200 : 503, {{"status", state.ready ? "ok" : "loading"}});
  });
  server.Get("/v1/models", [&state](const httplib::Request&, httplib::Response& response) {
    send_json(response, 200, {{"object", "list"}, {"data", json::array({model_card(state)})}});
  });
  server.Get(R"(/v1/models/(.+))", [&state](const httplib::Request& request, httplib::Response& response) {
    if (request.matches[1] != state.served.id) {
      return send_error(response, {404, "The model '" + std::string(request.matches[1]) + "' does not exist",
                                   "invalid_request_error", "model", "model_not_found"});
    }
    send_json(response, 200, model_card(state));
  });
  server.Get("/metrics", [&state](const httplib::Request&, httplib::Response& response) {
    response.set_content(state.metrics.text(), "text/plain; version=0.0.4");
  });
  server.Post("/tokenize", [&state](const httplib::Request& request, httplib::Response& response) {
    tokenize(request, response, state);
  });
  server.Post("/detokenize", [&state](const httplib::Request& request, httplib::Response& response) {
    detokenize(request, response, state);
  });
  server.Post("/v1/chat/completions", [&state](const httplib::Request& request, httplib::Response& response) {
    handle_completion(request, response, state, true);
  });
  server.Post("/v1/completions", [&state](const httplib::Request& request, httplib::Response& response) {
    handle_completion(request, response, state, false);
  });
}

}  // namespace nxrt::serve
