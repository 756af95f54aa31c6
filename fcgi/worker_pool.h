#pragma once
// A pool of threads that each accept FastCGI requests on the shared listening socket and answer
// them through their own Router and database connection.
#include <atomic>
#include <thread>
#include <vector>

#include "config/config.h"
#include "db/reference_store.h"

namespace connector::fcgi {

class WorkerPool {
 public:
  WorkerPool(int listen_fd, const config::Config& config);
  ~WorkerPool();

  void start();
  // Stops accepting, lets in-flight requests finish, joins the threads.
  void stop();

 private:
  void serve();

  int listen_fd_;
  const config::Config& config_;
  db::ReferenceCache reference_;
  std::atomic<bool> stopping_{false};
  std::vector<std::thread> threads_;
};

}  // namespace connector::fcgi
