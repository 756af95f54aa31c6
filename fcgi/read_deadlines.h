#pragma once
// The bound on how long a pool thread may spend reading one request. libfcgi reads a request
// (FCGX_Accept_r) with blocking reads and no timeout of its own, so a peer that connects and
// sends nothing, half a record, or a byte now and then would hold the thread for good. While a
// thread reads, its connection is registered here; one background thread per process shuts
// down (shutdown(2)) a connection still registered past its deadline, which makes libfcgi's
// read return 0: FCGX_Accept_r closes the connection and returns, and the thread is free.
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "unique_fd.h"

namespace connector::fcgi {

class ReadDeadlines {
 public:
  using Clock = std::chrono::steady_clock;

  ReadDeadlines(unsigned threads, std::chrono::milliseconds limit);
  ~ReadDeadlines();
  ReadDeadlines(const ReadDeadlines&) = delete;
  ReadDeadlines& operator=(const ReadDeadlines&) = delete;

  void start();
  void stop();

  // Thread `slot` (0 .. threads-1) starts reading a request from connection `fd`. A duplicate
  // of fd is held until done(): libfcgi closes fd itself when the read fails, and the shutdown
  // must never reach another connection that reused the number. False when fd cannot be
  // duplicated (no descriptor left): the read would have no bound, so the caller closes the
  // connection instead.
  bool reading(unsigned slot, int fd);
  // The read is over (a request, or the connection closed): the deadline no longer applies.
  void done(unsigned slot);

  std::chrono::milliseconds limit() const { return limit_; }

 private:
  struct Slot {
    std::mutex mutex;
    UniqueFd copy;  // the duplicate; none when the thread is not reading
    Clock::time_point deadline;
    bool cut = false;
  };

  void run();

  const std::chrono::milliseconds limit_;
  const std::chrono::milliseconds period_;  // how often deadlines are checked
  const unsigned count_;
  std::unique_ptr<Slot[]> slots_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace connector::fcgi
