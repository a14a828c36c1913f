// `nxrt serve FOLDER`: the OpenAI-compatible server. It listens at once (GET /health answers 503 until the model
// is loaded), loads the folder on a second thread, and on SIGTERM or SIGINT answers new completion requests with
// 503, lets running ones finish for --grace seconds, fails what is left, closes the listener and exits 0.
#include <httplib.h>

#include <sys/socket.h>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <thread>

#include "cli_common.h"
#include "serve_http.h"

namespace nxrt::cli {

namespace {

std::atomic<bool> signalled{false};

void on_signal(int) { signalled = true; }

struct ServeArgs {
  std::string folder, host = "127.0.0.1", model_name, api_key;
  int64_t port = 8000, max_batch = 8, max_queue = 64, max_body = 2 << 20, timeout_s = 30, grace_s = 10,
          threads = 0, http_threads = 0;
  bool quiet = false;
};

Expected<ServeArgs> parse_serve_args(const ParsedCommandLine& command_line) {
  ServeArgs args;
  args.folder = command_line.operands[0];
  for (const ParsedOption& option : command_line.options) {
    const auto count = [&](int64_t low, int64_t high, int64_t& out) -> Status {
      const auto n = parse_int(option.value);
      if (!n || *n < low || *n > high) {
        return usage_error(serve_command_spec(), option.name + " needs an integer in [" + std::to_string(low) + ", " +
                                                     std::to_string(high) + "]");
      }
      out = *n;
      return Status::ok();
    };
    if (option.name == "--host") {
      args.host = option.value;
    } else if (option.name == "--model-name") {
      args.model_name = option.value;
    } else if (option.name == "--api-key") {
      args.api_key = option.value;
    } else if (option.name == "--quiet") {
      args.quiet = true;
    } else if (option.name == "--port") {
      TRY(count(0, 65535, args.port));
    } else if (option.name == "--max-batch") {
      TRY(count(1, 256, args.max_batch));
    } else if (option.name == "--max-queue") {
      TRY(count(0, 100000, args.max_queue));
    } else if (option.name == "--max-body") {
      TRY(count(1024, int64_t{1} << 30, args.max_body));
    } else if (option.name == "--timeout") {
      TRY(count(1, 86400, args.timeout_s));
    } else if (option.name == "--grace") {
      TRY(count(0, 86400, args.grace_s));
    } else if (option.name == "--threads") {
      TRY(count(0, 1024, args.threads));
    } else if (option.name == "--http-threads") {
      TRY(count(1, 100000, args.http_threads));
    }
  }
  if (args.model_name.empty()) args.model_name = std::filesystem::path(args.folder).filename().string();
  if (args.model_name.empty()) args.model_name = std::filesystem::path(args.folder).parent_path().filename().string();
  return args;
}

Status load(const ServeArgs& args, serve::ServerState& state) {
  TRY_ASSIGN(auto model, genai::Model::load(args.folder, static_cast<int>(args.threads)));
  auto formatter = genai::ChatFormatter::from_folder(args.folder);
  if (formatter) state.formatter.emplace(std::move(*formatter));
  TRY_ASSIGN(auto engine, genai::BatchEngine::create(model, args.max_batch));
  state.served.vocab_size = model->config().vocab_size;
  state.served.context_length = model->config().context_length;
  state.served.max_choices = engine->max_batch();
  state.scheduler = std::make_unique<serve::Scheduler>(model, std::move(engine), args.max_queue, state.metrics);
  state.model = std::move(model);
  return Status::ok();
}

int serve(const ServeArgs& args) {
  std::signal(SIGPIPE, SIG_IGN);
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  serve::ServerState state;
  state.api_key = args.api_key;
  state.access_log = !args.quiet;
  state.served.id = args.model_name;
  httplib::Server server;
  const size_t pool = static_cast<size_t>(args.http_threads > 0 ? args.http_threads
                                                                 : args.max_queue + args.max_batch + 32);
  server.new_task_queue = [pool] { return new httplib::ThreadPool(pool); };
  server.set_payload_max_length(static_cast<size_t>(args.max_body));
  server.set_read_timeout(static_cast<time_t>(args.timeout_s));
  server.set_write_timeout(static_cast<time_t>(args.timeout_s));
  server.set_keep_alive_timeout(5);
  serve::install_routes(server, state);
  // httplib listens with a backlog of 5, which drops connections when hundreds of clients connect at once: the
  // listening socket is kept here and listened on again with a deep backlog (Linux updates it in place).
  socket_t listener = INVALID_SOCKET;
  server.set_socket_options([&listener](socket_t socket) {
    httplib::default_socket_options(socket);
    listener = socket;
  });
  int port = static_cast<int>(args.port);
  if (port == 0) {
    port = server.bind_to_any_port(args.host);
  } else if (!server.bind_to_port(args.host, port)) {
    port = -1;
  }
  if (port > 0 && listener != INVALID_SOCKET) ::listen(listener, 4096);
  if (port <= 0) {
    return report_error(Status(StatusCode::kInvalidArgument, "nxrt serve: cannot listen on " + args.host + ":" +
                                                                 std::to_string(args.port)));
  }
  std::cout << "nxrt serve: listening on http://" << args.host << ":" << port << " (model '" << args.model_name
            << "')" << std::endl;
  Status loaded = Status::ok();
  std::thread loader([&] {
    loaded = load(args, state);
    if (loaded.is_ok()) {
      state.ready = true;
      std::cerr << "nxrt serve: model loaded from " << args.folder << std::endl;
    } else {
      server.stop();
    }
  });
  std::atomic<bool> listening{true};
  std::thread watcher([&] {
    while (listening && !signalled) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (!signalled) return;
    // New completion requests get 503 from here on; the running ones finish, or fail once the grace is over.
    // Only then does the listener close (httplib cuts running streams when it stops).
    state.stopping = true;
    std::cerr << "nxrt serve: stopping (grace " << args.grace_s << " s)" << std::endl;
    const auto wait_for_requests = [&](std::chrono::steady_clock::duration limit) {
      const auto deadline = std::chrono::steady_clock::now() + limit;
      while (state.in_flight > 0 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    };
    wait_for_requests(std::chrono::seconds(args.grace_s));
    if (state.in_flight > 0 && state.scheduler) {
      state.scheduler->cancel_all("the server is shutting down");
      wait_for_requests(std::chrono::seconds(5));
    }
    server.stop();
  });
  server.listen_after_bind();
  listening = false;
  watcher.join();
  loader.join();
  if (state.scheduler) state.scheduler->stop();
  if (!loaded.is_ok()) return report_error(loaded.with_context("nxrt serve: "));
  return 0;
}

}  // namespace

const CommandSpec& serve_command_spec() {
  static const CommandSpec spec{
      .name = "serve",
      .operands = {"FOLDER"},
      .required_operands = 1,
      .summary = "Serve an ONNX Runtime GenAI model folder over the OpenAI HTTP API.",
      .description = "Routes: POST /v1/chat/completions, POST /v1/completions, GET /v1/models, GET /health,\n"
                     "POST /tokenize, POST /detokenize, GET /metrics. Concurrent requests share decoder steps\n"
                     "(continuous batching). The listening address goes to stdout, one JSON access-log line per\n"
                     "request to stderr.",
      .details = "SIGTERM or SIGINT: stop accepting, let running requests finish for --grace seconds, then end\n"
                 "them with an error event, and exit 0.",
      .options = {
          {"--host", "ADDRESS", "address to listen on (default 127.0.0.1)"},
          {"--port", "PORT", "port to listen on (default 8000; 0 picks a free one and prints it)"},
          {"--model-name", "NAME", "the model id clients send (default: the folder's name)"},
          {"--api-key", "KEY", "require 'Authorization: Bearer KEY' (default: any request is accepted)"},
          {"--max-batch", "N", "sequences decoded together (default 8)"},
          {"--max-queue", "N", "requests waiting for a batch slot before 429 (default 64)"},
          {"--max-body", "BYTES", "largest request body; larger ones get 413 (default 2097152)"},
          {"--timeout", "S", "close a connection that sends or takes nothing for S seconds (default 30)"},
          {"--grace", "S", "seconds running requests may finish after SIGTERM (default 10)"},
          {"--threads", "N", "intra-op threads (default: the folder's session_options, else one per core)"},
          {"--http-threads", "N", "connection threads (default: max-queue + max-batch + 32)"},
          {"--quiet", "", "no access log"},
      }};
  return spec;
}

int run_serve_command(const std::vector<std::string>& args) {
  return with_command_line(serve_command_spec(), args, [](const ParsedCommandLine& command_line) {
    Expected<ServeArgs> parsed = parse_serve_args(command_line);
    if (!parsed) return report_error(parsed.status());
    return serve(*parsed);
  });
}

}  // namespace nxrt::cli
