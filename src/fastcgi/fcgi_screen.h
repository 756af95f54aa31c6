#pragma once
// The FastCGI screen: a verdict on the bytes a peer has queued on a connection, taken before
// libfcgi reads any of them (fcgi/request_screen.cpp peeks at them with MSG_PEEK). libfcgi
// 2.4 trusts its peer: a name length near 2^31 in a PARAMS record aborts the process on a
// failed malloc, FCGI_GET_VALUES is answered from a fixed 64-byte buffer, and nothing bounds a
// request's parameters. So libfcgi only ever sees one request that is well formed and bounded:
//
// * records of version 1 only, and only FCGI_BEGIN_REQUEST (role RESPONDER, first), then
//   FCGI_PARAMS up to the empty record that ends them, then FCGI_STDIN up to its empty record,
//   or FCGI_ABORT_REQUEST;
// * no management record (request id 0, FCGI_GET_VALUES, unknown types) and one request id
//   per connection at a time;
// * every name-value pair of a PARAMS record inside that record, its lengths (1- or 4-byte
//   forms) summed in 64 bits;
// * no padding after FCGI_BEGIN_REQUEST or after an empty record (libfcgi does not skip it
//   there, and would read it as a record the screen never saw);
// * at most kMaxRecords records;
// * the parameters at most max_params_bytes, the body at most max_stdin_bytes, and the whole
//   request, record headers and padding included, at most max_request_bytes().
//
// A pure function from bytes to a verdict: unit-tested (tests/unit/test_fcgi_screen.cpp) and
// fuzzed (tests/fuzz/fuzz_fcgi_screen.cpp).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>

namespace connector::fastcgi {

struct FcgiLimits {
  // fcgi_max_params_bytes. nginx sends 1-2 KiB, and at most about 50 KiB: the URL (at most
  // 8 KiB with the shipped large_client_header_buffers) twice, and every header (32 KiB).
  std::size_t max_params_bytes = 65536;
  std::size_t max_stdin_bytes = 4096;  // this API takes no body (nginx: 1k at most)
};

// Room for the records' headers and padding beyond their content: nginx sends 5 records.
inline constexpr std::size_t kRecordOverheadBytes = 4096;
// The most records one request may take. nginx sends 4 or 5 (BEGIN, one PARAMS, its end, a
// body record at most, STDIN's end); a bound keeps each look at a waiting request cheap, since
// every look screens it again from its first byte.
inline constexpr std::size_t kMaxRecords = 16;

// The most bytes one request within `limits` may take on the wire.
constexpr std::size_t max_request_bytes(const FcgiLimits& limits) {
  return limits.max_params_bytes + limits.max_stdin_bytes + kRecordOverheadBytes;
}

enum class FcgiVerdict {
  kIncomplete,  // well formed so far: wait for more bytes
  kRequest,     // one whole request (through its empty STDIN record): hand it to libfcgi
  kAborted,     // the peer abandoned its request (FCGI_ABORT_REQUEST): close, no answer
  kRejected,    // close at once, counted and logged (reason)
};

// Why a request was rejected: the label of connector_fcgi_rejected_total{reason}.
enum class FcgiRejection {
  kNone,
  kMalformed,   // not a request libfcgi should see
  kTooLarge,    // over a bound
  kManagement,  // a management record
  kDeadline,    // not whole within the read deadline (set by the caller, not by the screen)
};
std::string_view rejection_label(FcgiRejection reason);

struct FcgiScreen {
  FcgiVerdict verdict = FcgiVerdict::kIncomplete;
  FcgiRejection reason = FcgiRejection::kNone;
  std::string_view detail;        // what was wrong, for the log (a static string)
  std::size_t request_bytes = 0;  // kRequest: the request's bytes, from the first one
  bool keep_connection = false;   // the BEGIN_REQUEST's FCGI_KEEP_CONN flag, once seen
  // What libfcgi will read of a passed request (its tests compare): the name-value pairs of
  // its parameters and the bytes of its body.
  std::size_t pairs = 0;
  std::size_t stdin_bytes = 0;
  // kIncomplete: the bytes there must be, from the first one, before the verdict can change
  // (the end of the record or header being waited for): a look at fewer is wasted.
  std::size_t need_bytes = 0;
};

// Receives each name-value pair of a screened request, in order (its tests compare them with
// what libfcgi reads).
using PairSink = std::function<void(std::string_view name, std::string_view value)>;

FcgiScreen screen_fcgi_request(std::span<const std::uint8_t> bytes, const FcgiLimits& limits,
                               const PairSink* sink = nullptr);

}  // namespace connector::fastcgi
