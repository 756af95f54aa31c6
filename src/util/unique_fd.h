#pragma once
// A descriptor this code owns: closed exactly once, by its destructor or reset(), unless handed
// on with release() (to libfcgi, which then closes it itself when a read fails). Every
// descriptor the worker and the library open lives in one; the listening socket, which lives as
// long as the process, is the one raw number passed around (borrowed, never closed). In util/
// so that every layer may use it.
#include <unistd.h>

#include <stdexcept>
#include <string>
#include <utility>

namespace connector::util {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  // The number, no longer owned here.
  int release() noexcept { return std::exchange(fd_, -1); }
  // Closes the descriptor held, if any, and holds `fd` instead.
  void reset(int fd = -1) noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// `fd`, owned, as returned by the call named `what`; an exception when that call failed.
inline UniqueFd checked_fd(int fd, const char* what) {
  if (fd < 0) throw std::runtime_error(std::string(what) + " failed");
  return UniqueFd(fd);
}

}  // namespace connector::util
