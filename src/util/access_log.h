#pragma once
// The access log: one JSON object per request, one write() per line, to stderr (journald), a
// file (opened O_APPEND, so lines from all processes interleave whole), or nowhere.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "util/unique_fd.h"

namespace connector::util {

struct AccessRecord {
  std::int64_t time_unix_ms = 0;
  std::string_view request_id;
  std::string_view method;
  std::string_view endpoint;  // the route's label, never the raw path
  int status = 0;
  std::uint64_t duration_us = 0;
  std::size_t bytes = 0;
  int pid = 0;
};

// {"time":"2026-11-22T02:20:00.123Z","request_id":...,"endpoint":...,"status":200,
//  "duration_ms":1.234,"bytes":512,...}\n
std::string format_access_line(const AccessRecord& record);

class AccessLog {
 public:
  // "stderr", "off", or a file path. Throws std::runtime_error when the file cannot be opened.
  explicit AccessLog(const std::string& destination);
  AccessLog(const AccessLog&) = delete;
  AccessLog& operator=(const AccessLog&) = delete;

  bool enabled() const { return fd_ >= 0; }
  void write(std::string_view line) const;

 private:
  UniqueFd file_;  // the file opened, if any (stderr is written, never closed)
  int fd_ = -1;    // where lines go: file_'s or stderr
};

}  // namespace connector::util
