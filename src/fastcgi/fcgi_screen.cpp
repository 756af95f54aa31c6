#include "fastcgi/fcgi_screen.h"

#include "fastcgi/fcgi_record.h"

#include <string_view>

namespace connector::fastcgi {
namespace {

using namespace fcgi_record;  // NOLINT(google-build-using-namespace): the record's own names

constexpr std::size_t kBeginBodyBytes = 8;
constexpr std::uint16_t kResponder = 1;
constexpr std::uint8_t kKeepConnection = 1;

struct Header {
  std::uint8_t version;
  std::uint8_t type;
  std::uint16_t request_id;
  std::size_t content_bytes;
  std::size_t record_bytes;  // header, content and padding
};

std::uint16_t big_endian_16(const std::uint8_t* p) {
  return static_cast<std::uint16_t>((p[0] << 8) | p[1]);
}

Header read_header(const std::uint8_t* p) {
  const std::size_t content = big_endian_16(p + 4);
  return {p[0], p[1], big_endian_16(p + 2), content, kHeaderBytes + content + p[6]};
}

FcgiScreen rejected(FcgiRejection reason, std::string_view detail) {
  return {.verdict = FcgiVerdict::kRejected, .reason = reason, .detail = detail};
}

// One length of a name-value pair: 1 byte below 128, else 4 bytes with the top bit set.
// False when it runs past the content.
bool read_length(std::span<const std::uint8_t> content, std::size_t& pos, std::uint64_t& length) {
  if (pos >= content.size()) return false;
  if (content[pos] < 0x80) {
    length = content[pos++];
    return true;
  }
  if (content.size() - pos < 4) return false;
  length = (std::uint64_t{content[pos] & 0x7Fu} << 24) | (std::uint64_t{content[pos + 1]} << 16) |
           (std::uint64_t{content[pos + 2]} << 8) | content[pos + 3];
  pos += 4;
  return true;
}

// Whether every name-value pair of one PARAMS record lies inside it (in 64 bits: two lengths
// below 2^31 cannot overflow, unlike libfcgi's 32-bit sum); counts them into `pairs`, and hands
// each to `sink` when there is one.
bool pairs_fit(std::span<const std::uint8_t> content, std::size_t& pairs, const PairSink* sink) {
  std::size_t pos = 0;
  while (pos < content.size()) {
    std::uint64_t name = 0;
    std::uint64_t value = 0;
    if (!read_length(content, pos, name) || !read_length(content, pos, value)) return false;
    if (name + value > content.size() - pos) return false;
    if (sink != nullptr) {
      const auto* text = reinterpret_cast<const char*>(content.data() + pos);
      (*sink)({text, static_cast<std::size_t>(name)},
              {text + name, static_cast<std::size_t>(value)});
    }
    pos += static_cast<std::size_t>(name + value);
    ++pairs;
  }
  return true;
}

// libfcgi skips a record's padding only after content it has read through its stream: after
// FCGI_BEGIN_REQUEST and after the empty record that ends PARAMS or STDIN it starts the next
// record where the padding begins, and would read the padding as a record of its own (one
// the screen never saw). nginx pads neither.
constexpr std::string_view kUnreadPadding =
    "padding after FCGI_BEGIN_REQUEST or an empty record (libfcgi would read it as a record)";

// Where the request is: which record it may take next.
enum class Stage { kBegin, kParams, kStdin };

// The checks a record's header allows, before its content has arrived (so an oversized record
// is refused on its first 8 bytes). Returns a rejection, or kIncomplete to go on.
FcgiScreen check_header(const Header& h, Stage stage, std::uint16_t request_id, std::size_t& params,
                        std::size_t& body, const FcgiLimits& limits) {
  if (h.version != kVersion)
    return rejected(FcgiRejection::kMalformed, "a record not of version 1");
  if (h.request_id == 0 || h.type >= kGetValues) {
    return rejected(FcgiRejection::kManagement, "a management or unknown record");
  }
  if (h.type == kBeginRequest) {
    if (stage != Stage::kBegin) {
      return rejected(FcgiRejection::kMalformed,
                      "a second FCGI_BEGIN_REQUEST on a busy connection");
    }
    if (h.content_bytes != kBeginBodyBytes) {
      return rejected(FcgiRejection::kMalformed, "an FCGI_BEGIN_REQUEST body not of 8 bytes");
    }
    if (h.record_bytes != kHeaderBytes + kBeginBodyBytes) {
      return rejected(FcgiRejection::kMalformed, kUnreadPadding);
    }
    return {};
  }
  if (stage == Stage::kBegin) {
    return rejected(FcgiRejection::kMalformed,
                    "a request that does not start with FCGI_BEGIN_REQUEST");
  }
  if (h.request_id != request_id) {
    return rejected(FcgiRejection::kMalformed, "a second request id on one connection");
  }
  if (h.type == kAbortRequest) return {};  // the request ends there: libfcgi reads no further
  if (h.content_bytes == 0 && h.record_bytes != kHeaderBytes) {
    return rejected(FcgiRejection::kMalformed, kUnreadPadding);
  }
  switch (h.type) {
    case kParams:
      if (stage != Stage::kParams) {
        return rejected(FcgiRejection::kMalformed, "FCGI_PARAMS after the parameters ended");
      }
      params += h.content_bytes;
      if (params > limits.max_params_bytes) {
        return rejected(FcgiRejection::kTooLarge, "parameters over fcgi_max_params_bytes");
      }
      return {};
    case kStdin:
      if (stage != Stage::kStdin) {
        return rejected(FcgiRejection::kMalformed, "FCGI_STDIN before the parameters ended");
      }
      body += h.content_bytes;
      if (body > limits.max_stdin_bytes) {
        return rejected(FcgiRejection::kTooLarge, "a request body over its bound");
      }
      return {};
    default:  // END_REQUEST, STDOUT, STDERR, DATA: not a web server's to send
      return rejected(FcgiRejection::kMalformed, "a record type a web server does not send");
  }
}

}  // namespace

std::string_view rejection_label(FcgiRejection reason) {
  switch (reason) {
    case FcgiRejection::kMalformed:
      return "malformed";
    case FcgiRejection::kTooLarge:
      return "too_large";
    case FcgiRejection::kManagement:
      return "management_record";
    case FcgiRejection::kDeadline:
      return "deadline";
    case FcgiRejection::kNone:
      break;
  }
  return "none";
}

// One pass over the records, each bound checked in order in this one place (a size exception:
// docs/architecture.md).
// NOLINTNEXTLINE(readability-function-size)
FcgiScreen screen_fcgi_request(std::span<const std::uint8_t> bytes, const FcgiLimits& limits,
                               const PairSink* sink) {
  const std::size_t bound = max_request_bytes(limits);
  FcgiScreen result;
  Stage stage = Stage::kBegin;
  std::uint16_t request_id = 0;
  std::size_t params = 0;
  std::size_t body = 0;
  for (std::size_t offset = 0, records = 0;; ++records) {
    if (offset + kHeaderBytes > bound) {
      return rejected(FcgiRejection::kTooLarge, "a request over its bound");
    }
    if (records == kMaxRecords) {
      return rejected(FcgiRejection::kTooLarge, "a request of more records than nginx sends");
    }
    if (bytes.size() - offset < kHeaderBytes) {  // incomplete
      result.need_bytes = offset + kHeaderBytes;
      return result;
    }
    const Header h = read_header(bytes.data() + offset);
    if (const auto checked = check_header(h, stage, request_id, params, body, limits);
        checked.verdict != FcgiVerdict::kIncomplete) {
      return checked;
    }
    if (offset + h.record_bytes > bound) {
      return rejected(FcgiRejection::kTooLarge, "a request over its bound");
    }
    if (bytes.size() - offset < h.record_bytes) {  // incomplete
      result.need_bytes = offset + h.record_bytes;
      return result;
    }
    const auto content = bytes.subspan(offset + kHeaderBytes, h.content_bytes);
    offset += h.record_bytes;
    switch (h.type) {
      case kBeginRequest:
        if (big_endian_16(content.data()) != kResponder) {
          return rejected(FcgiRejection::kMalformed, "a role other than RESPONDER");
        }
        request_id = h.request_id;
        result.keep_connection = (content[2] & kKeepConnection) != 0;
        stage = Stage::kParams;
        break;
      case kAbortRequest:
        result.verdict = FcgiVerdict::kAborted;
        return result;
      case kParams:
        if (content.empty()) {
          stage = Stage::kStdin;
        } else if (!pairs_fit(content, result.pairs, sink)) {
          return rejected(FcgiRejection::kMalformed,
                          "a name-value pair past the end of its record");
        }
        break;
      default:  // kStdin: its empty record ends the request
        if (content.empty()) {
          result.verdict = FcgiVerdict::kRequest;
          result.request_bytes = offset;
          return result;
        }
        result.stdin_bytes += content.size();
        break;
    }
  }
}

}  // namespace connector::fastcgi
