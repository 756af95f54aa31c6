#pragma once
// A thread of a worker process that runs one round of work, waits, and runs the next, until
// stopped: the refresher, the server prober, the lag monitor, the events publisher. A
// stop wakes it at once.
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace connector::util {

class BackgroundLoop {
 public:
  // One round; returns how long to wait before the next.
  using Round = std::function<std::chrono::milliseconds()>;
  struct NoScope {};

  BackgroundLoop() = default;
  ~BackgroundLoop() { stop(); }
  BackgroundLoop(const BackgroundLoop&) = delete;
  BackgroundLoop& operator=(const BackgroundLoop&) = delete;

  // Starts the thread, named `name` (at most 15 characters: what `top -H` and
  // /proc/PID/task/TID/comm show), and returns once its first round has ended. A `Scope` is made
  // on the thread before its first round and lives until it ends: the per-thread setup a
  // library wants (db::DriverThreadScope for the database driver), which util/ does not know.
  template <typename Scope = NoScope>
  void start(const char* name, Round round) {
    launch(name, [this, round = std::move(round)] {
      [[maybe_unused]] Scope scope;
      run(round);
    });
  }
  void stop();

 private:
  void launch(const char* name, std::function<void()> body);
  void run(const Round& round);

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool first_round_done_ = false;
  std::thread thread_;
};

}  // namespace connector::util
