// Fuzzes src/fastcgi/fcgi_screen.h: the screen in front of libfcgi, on any bytes, with small bounds
// (so that the fuzzer reaches them). Invariants: a request it passes lies within the input and
// the bound, and is passed again, with the same length, when screened alone (the bytes after it
// play no part); every strict prefix of a passed request is incomplete, never rejected; and a
// rejected input stays rejected whatever follows it.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "fastcgi/fcgi_screen.h"
#include "fuzz_check.h"

namespace {

using connector::fastcgi::FcgiLimits;
using connector::fastcgi::FcgiVerdict;
using connector::fastcgi::max_request_bytes;
using connector::fastcgi::screen_fcgi_request;

constexpr FcgiLimits kLimits{.max_params_bytes = 512, .max_stdin_bytes = 64};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  const auto result = screen_fcgi_request(bytes, kLimits);
  if (result.verdict == FcgiVerdict::kRejected) {
    FUZZ_CHECK(!result.detail.empty());
    std::vector<std::uint8_t> longer(bytes.begin(), bytes.end());
    longer.resize(size + 64, 0x01);
    FUZZ_CHECK(screen_fcgi_request(longer, kLimits).verdict == FcgiVerdict::kRejected);
  }
  if (result.verdict != FcgiVerdict::kRequest) return 0;
  FUZZ_CHECK(result.request_bytes >= 24 && result.request_bytes <= size);
  FUZZ_CHECK(result.request_bytes <= max_request_bytes(kLimits));
  const auto alone = screen_fcgi_request(bytes.first(result.request_bytes), kLimits);
  FUZZ_CHECK(alone.verdict == FcgiVerdict::kRequest);
  FUZZ_CHECK(alone.request_bytes == result.request_bytes);
  FUZZ_CHECK(alone.keep_connection == result.keep_connection);
  for (std::size_t cut = 0; cut < result.request_bytes; ++cut) {
    FUZZ_CHECK(screen_fcgi_request(bytes.first(cut), kLimits).verdict == FcgiVerdict::kIncomplete);
  }
  return 0;
}
