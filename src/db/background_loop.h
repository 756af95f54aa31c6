#pragma once
// A thread of a worker process that runs one round of database work, waits, and runs the next,
// until stopped: the snapshot refresher and the server prober. A stop wakes it at once.
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace connector::db {

class BackgroundLoop {
 public:
  // One round; returns how long to wait before the next.
  using Round = std::function<std::chrono::milliseconds()>;

  BackgroundLoop() = default;
  ~BackgroundLoop() { stop(); }
  BackgroundLoop(const BackgroundLoop&) = delete;
  BackgroundLoop& operator=(const BackgroundLoop&) = delete;

  // Starts the thread (set up for the database driver), named `name` (at most 15 characters:
  // what `top -H` and /proc/PID/task/TID/comm show), and returns once its first round has ended.
  void start(const char* name, Round round);
  void stop();

 private:
  void run(const Round& round);

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool first_round_done_ = false;
  std::thread thread_;
};

}  // namespace connector::db
