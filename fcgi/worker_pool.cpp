#include "worker_pool.h"

#include <fcgiapp.h>
#include <sys/socket.h>

#include <chrono>
#include <string_view>

#include "api/router.h"
#include "db/database.h"
#include "util/log.h"

namespace connector::fcgi {
namespace {

std::string_view param(const FCGX_Request& request, const char* name) {
  const char* value = FCGX_GetParam(name, request.envp);
  return value == nullptr ? std::string_view{} : std::string_view{value};
}

// nginx's $document_uri is the decoded, normalised path; REQUEST_URI is the fallback.
std::string_view request_path(const FCGX_Request& request) {
  std::string_view path = param(request, "DOCUMENT_URI");
  if (path.empty()) {
    path = param(request, "REQUEST_URI");
    path = path.substr(0, path.find('?'));
  }
  return path;
}

void put(FCGX_Stream* out, std::string_view bytes) {
  if (!bytes.empty()) FCGX_PutStr(bytes.data(), static_cast<int>(bytes.size()), out);
}

}  // namespace

WorkerPool::WorkerPool(int listen_fd, const config::Config& config)
    : listen_fd_(listen_fd),
      config_(config),
      reference_(std::chrono::milliseconds(config.worker.reference_refresh_ms)) {}

WorkerPool::~WorkerPool() { stop(); }

void WorkerPool::start() {
  for (unsigned i = 0; i < config_.worker.threads; ++i) threads_.emplace_back([this] { serve(); });
}

void WorkerPool::stop() {
  if (stopping_.exchange(true)) return;
  // Wakes every thread blocked in accept(); requests already accepted run to the end.
  ::shutdown(listen_fd_, SHUT_RDWR);
  for (auto& thread : threads_) thread.join();
  threads_.clear();
}

void WorkerPool::serve() {
  db::DriverThreadScope driver_thread;
  db::Database database(config_.db);
  api::Router router({database, reference_});
  FCGX_Request request;
  FCGX_InitRequest(&request, listen_fd_, 0);
  while (!stopping_) {
    if (FCGX_Accept_r(&request) < 0) {
      if (stopping_) break;
      // Never retry at once: a broken socket would spin a core.
      util::log_warning("FastCGI accept failed; retrying");
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    const auto response = router.handle({
        .method = param(request, "REQUEST_METHOD"),
        .path = request_path(request),
        .query_string = param(request, "QUERY_STRING"),
        .if_none_match = param(request, "HTTP_IF_NONE_MATCH"),
        .request_id = param(request, "REQUEST_ID"),
    });
    put(request.out, response.head);
    put(request.out, response.body);
    FCGX_Finish_r(&request);
  }
  FCGX_Free(&request, 0);
}

}  // namespace connector::fcgi
