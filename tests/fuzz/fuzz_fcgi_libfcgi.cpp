// Fuzzes the screen against libfcgi itself (fastcgi/fcgi_screen.h, tests/libfcgi_reading.h): every
// input the screen passes is read by libfcgi 2.4 as the worker reads it, in messages of a size
// taken from the input, and libfcgi must accept it, read it to its last byte without an error,
// and find the same name-value pairs (names and values, in order), keep-connection flag and
// body. A crash here is libfcgi crashing on bytes the screen let through. The parameters' bound
// is above libfcgi's 8 KiB reads, so a request can span several.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fastcgi/fcgi_screen.h"
#include "fuzz_check.h"
#include "libfcgi_reading.h"

namespace {

using connector::fastcgi::FcgiLimits;
using connector::fastcgi::FcgiVerdict;
using connector::fastcgi::PairSink;
using connector::fastcgi::screen_fcgi_request;

constexpr FcgiLimits kLimits{.max_params_bytes = 12288, .max_stdin_bytes = 64};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  std::vector<std::string> pairs;
  const PairSink sink = [&pairs](std::string_view name, std::string_view value) {
    pairs.push_back(connector::testing::libfcgi_entry(name, value));
  };
  const auto screened = screen_fcgi_request(bytes, kLimits, &sink);
  if (screened.verdict != FcgiVerdict::kRequest) return 0;
  // libfcgi gets the request alone (the worker hands it one at a time), in messages of 1 to
  // 256 bytes chosen by the input's last byte.
  const std::size_t chunk = 1 + data[size - 1];
  const auto read =
      connector::testing::read_with_libfcgi(bytes.first(screened.request_bytes), chunk);
  FUZZ_CHECK(read.accepted);
  FUZZ_CHECK(!read.error);
  FUZZ_CHECK(!read.bytes_left);
  FUZZ_CHECK(read.keep_connection == screened.keep_connection);
  FUZZ_CHECK(read.params == pairs);
  FUZZ_CHECK(read.stdin_bytes == screened.stdin_bytes);
  return 0;
}
