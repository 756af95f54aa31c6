#pragma once
// The FastCGI record layout (the FastCGI specification, sections 3.3 and 8), shared by the
// screen that reads records (fastcgi/fcgi_screen.h) and the worker that writes them
// (fcgi/stdout_records.h).
#include <cstddef>
#include <cstdint>

namespace connector::fastcgi::fcgi_record {

inline constexpr std::uint8_t kVersion = 1;
inline constexpr std::size_t kHeaderBytes = 8;  // version, type, id (2), length (2), padding, 0
inline constexpr std::size_t kMaxContentBytes = 65535;

enum Type : std::uint8_t {
  kBeginRequest = 1,
  kAbortRequest = 2,
  kEndRequest = 3,
  kParams = 4,
  kStdin = 5,
  kStdout = 6,
  kGetValues = 9,  // this and every higher type: management records, or unknown ones
};

}  // namespace connector::fastcgi::fcgi_record
