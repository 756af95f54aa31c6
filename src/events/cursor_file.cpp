#include "events/cursor_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "util/unique_fd.h"

namespace connector::events {

namespace {

constexpr std::size_t kMaxDigits = 20;  // 18446744073709551615

}  // namespace

std::optional<std::uint64_t> parse_cursor_text(std::string_view text) {
  if (text.ends_with('\n')) text.remove_suffix(1);
  if (text.empty() || text.size() > kMaxDigits) return std::nullopt;
  // For an unsigned type from_chars takes digits only: no sign, no space, no prefix.
  std::uint64_t seq = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seq);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return seq;
}

std::optional<std::uint64_t> read_cursor_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    if (errno == ENOENT) return std::nullopt;
    throw std::runtime_error(path + ": " + std::strerror(errno));
  }
  // One byte past the longest position: a file that long is not one, whatever follows.
  std::string text(kMaxDigits + 2, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  const auto seq = text.size() > kMaxDigits + 1 ? std::nullopt : parse_cursor_text(text);
  if (!seq) throw std::runtime_error(path + ": not a feed position (one decimal number)");
  return seq;
}

void write_cursor_file(const std::string& path, std::uint64_t seq) {
  // A name of this process's own beside it (two processes may write during a hand-over), made
  // durable before it replaces the file, and the rename made durable too.
  const std::string next = path + ".next." + std::to_string(::getpid());
  const std::string text = std::to_string(seq) + "\n";
  util::UniqueFd fd(::open(next.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640));
  if (!fd) throw std::runtime_error(next + ": cannot write: " + std::strerror(errno));
  const bool written =
      ::write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
      ::fsync(fd.get()) == 0;
  const int error = errno;
  fd.reset();
  if (!written || std::rename(next.c_str(), path.c_str()) != 0) {
    const int cause = written ? errno : error;
    ::unlink(next.c_str());
    throw std::runtime_error(path + ": cannot replace: " + std::strerror(cause));
  }
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  const util::UniqueFd dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir_fd) ::fsync(dir_fd.get());
}

}  // namespace connector::events
