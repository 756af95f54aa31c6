#include "events/cursor_file.h"

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace connector::events {

std::optional<std::uint64_t> read_cursor_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    if (errno == ENOENT) return std::nullopt;
    throw std::runtime_error(path + ": " + std::strerror(errno));
  }
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!text.empty() && text.back() == '\n') text.pop_back();
  std::uint64_t seq = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seq);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
    throw std::runtime_error(path + ": not a feed position (one decimal number)");
  }
  return seq;
}

void write_cursor_file(const std::string& path, std::uint64_t seq) {
  const std::string next = path + ".next";
  {
    std::ofstream out(next, std::ios::trunc);
    out << seq << '\n';
    out.flush();
    if (!out) throw std::runtime_error(next + ": cannot write: " + std::strerror(errno));
  }
  if (std::rename(next.c_str(), path.c_str()) != 0) {
    throw std::runtime_error(path + ": cannot replace: " + std::strerror(errno));
  }
}

}  // namespace connector::events
