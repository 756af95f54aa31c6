// Fuzzes the screen against libfcgi itself (net/fcgi_screen.h, tests/libfcgi_reading.h): every
// input the screen passes is read by libfcgi 2.4 as the worker reads it, and libfcgi must accept
// it, read it to the end of its body without an error, and find the same name-value pairs and
// body bytes. A crash here is libfcgi crashing on bytes the screen let through. The bounds are
// small so that the fuzzer reaches them.
#include <cstddef>
#include <cstdint>
#include <span>

#include "fuzz_check.h"
#include "libfcgi_reading.h"
#include "net/fcgi_screen.h"

namespace {

using connector::net::FcgiLimits;
using connector::net::FcgiVerdict;
using connector::net::screen_fcgi_request;

constexpr FcgiLimits kLimits{.max_params_bytes = 512, .max_stdin_bytes = 64};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  const auto screened = screen_fcgi_request(bytes, kLimits);
  if (screened.verdict != FcgiVerdict::kRequest) return 0;
  // libfcgi gets the request alone: the worker hands it one request at a time.
  const auto read = connector::testing::read_with_libfcgi(bytes.first(screened.request_bytes));
  FUZZ_CHECK(read.accepted);
  FUZZ_CHECK(!read.error);
  FUZZ_CHECK(read.pairs == screened.pairs);
  FUZZ_CHECK(read.stdin_bytes == screened.stdin_bytes);
  return 0;
}
