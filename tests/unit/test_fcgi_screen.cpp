// The FastCGI screen (fastcgi/fcgi_screen.h): what libfcgi may see. Requests are built record by
// record as nginx sends them, then broken one way at a time; those it passes are read by
// libfcgi itself (libfcgi_reading.h), which must see the same request.
#define BOOST_TEST_MODULE fcgi_screen
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fastcgi/fcgi_screen.h"
#include "libfcgi_reading.h"

using connector::fastcgi::FcgiLimits;
using connector::fastcgi::FcgiRejection;
using connector::fastcgi::FcgiScreen;
using connector::fastcgi::FcgiVerdict;
using connector::fastcgi::max_request_bytes;
using connector::fastcgi::screen_fcgi_request;
using Bytes = std::vector<std::uint8_t>;

namespace {

constexpr std::uint8_t kBegin = 1, kAbort = 2, kEnd = 3, kParams = 4, kStdin = 5, kStdout = 6,
                       kGetValues = 9;

Bytes record(std::uint8_t type, std::uint16_t id, const Bytes& content, std::uint8_t padding = 0,
             std::uint8_t version = 1) {
  Bytes out = {version,
               type,
               static_cast<std::uint8_t>(id >> 8),
               static_cast<std::uint8_t>(id & 0xFF),
               static_cast<std::uint8_t>(content.size() >> 8),
               static_cast<std::uint8_t>(content.size() & 0xFF),
               padding,
               0};
  out.insert(out.end(), content.begin(), content.end());
  out.insert(out.end(), padding, 0);
  return out;
}

Bytes begin(std::uint16_t id = 1, bool keep = false, std::uint16_t role = 1) {
  return record(kBegin, id,
                {static_cast<std::uint8_t>(role >> 8), static_cast<std::uint8_t>(role & 0xFF),
                 static_cast<std::uint8_t>(keep ? 1 : 0), 0, 0, 0, 0, 0});
}

void append_length(Bytes& out, std::uint32_t length, bool long_form) {
  if (!long_form && length < 128) {
    out.push_back(static_cast<std::uint8_t>(length));
    return;
  }
  out.push_back(static_cast<std::uint8_t>((length >> 24) | 0x80));
  out.push_back(static_cast<std::uint8_t>(length >> 16));
  out.push_back(static_cast<std::uint8_t>(length >> 8));
  out.push_back(static_cast<std::uint8_t>(length));
}

Bytes pair(std::string_view name, std::string_view value) {
  Bytes out;
  append_length(out, static_cast<std::uint32_t>(name.size()), false);
  append_length(out, static_cast<std::uint32_t>(value.size()), false);
  out.insert(out.end(), name.begin(), name.end());
  out.insert(out.end(), value.begin(), value.end());
  return out;
}

// A pair whose lengths say name_length and value_length, in the 4-byte form, with no bytes.
Bytes lying_pair(std::uint32_t name_length, std::uint32_t value_length) {
  Bytes out;
  append_length(out, name_length, true);
  append_length(out, value_length, true);
  return out;
}

Bytes join(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const auto& part : parts) out.insert(out.end(), part.begin(), part.end());
  return out;
}

Bytes nginx_params() {
  return join({pair("REQUEST_METHOD", "GET"), pair("DOCUMENT_URI", "/v1/history"),
               pair("QUERY_STRING", "page_size=5"), pair("REQUEST_ID", std::string(32, 'a'))});
}

// A whole request as nginx sends it: padded records, an empty STDIN.
Bytes nginx_request(std::uint16_t id = 1, bool keep = false) {
  const Bytes params = nginx_params();
  return join({begin(id, keep), record(kParams, id, params, (8 - params.size() % 8) % 8),
               record(kParams, id, {}), record(kStdin, id, {})});
}

FcgiScreen screen(const Bytes& bytes, FcgiLimits limits = {}) {
  return screen_fcgi_request(bytes, limits);
}

void check_rejected(const Bytes& bytes, FcgiRejection reason, FcgiLimits limits = {}) {
  const FcgiScreen result = screen(bytes, limits);
  BOOST_TEST((result.verdict == FcgiVerdict::kRejected));
  BOOST_TEST((result.reason == reason), "reason " << static_cast<int>(result.reason));
  BOOST_TEST(!result.detail.empty());
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_request_as_nginx_sends_it_passes_whole) {
  for (const bool keep : {false, true}) {
    const Bytes request = nginx_request(1, keep);
    const FcgiScreen result = screen(request);
    BOOST_TEST((result.verdict == FcgiVerdict::kRequest));
    BOOST_TEST(result.request_bytes == request.size());
    BOOST_TEST(result.keep_connection == keep);
  }
}

BOOST_AUTO_TEST_CASE(every_prefix_of_a_request_waits_for_more) {
  const Bytes request = nginx_request();
  for (std::size_t size = 0; size < request.size(); ++size) {
    const Bytes prefix(request.begin(), request.begin() + static_cast<std::ptrdiff_t>(size));
    BOOST_TEST((screen(prefix).verdict == FcgiVerdict::kIncomplete), "prefix of " << size);
  }
}

BOOST_AUTO_TEST_CASE(bytes_after_the_request_are_left_for_the_next_one) {
  const Bytes request = nginx_request(1, true);
  const Bytes two = join({request, nginx_request(2, true)});
  const FcgiScreen result = screen(two);
  BOOST_TEST((result.verdict == FcgiVerdict::kRequest));
  BOOST_TEST(result.request_bytes == request.size());
}

BOOST_AUTO_TEST_CASE(a_request_body_within_its_bound_passes) {
  const Bytes body(1000, 'x');
  const Bytes request = join({begin(), record(kParams, 1, nginx_params()), record(kParams, 1, {}),
                              record(kStdin, 1, body), record(kStdin, 1, {})});
  BOOST_TEST((screen(request).verdict == FcgiVerdict::kRequest));
}

// The reproducer of the crash libfcgi 2.4.2 aborts on (a malloc of about 2^31 bytes), and the
// lengths around it: each is refused, never handed on.
BOOST_AUTO_TEST_CASE(name_value_lengths_past_their_record_are_malformed) {
  const std::vector<std::pair<std::uint32_t, std::uint32_t>> lengths = {
      {0xFFFFFFFEu, 0},                              // written as 0xfffffffe: 0x7ffffffe
      {0x7FFFFFFFu, 0},           {0x80000000u, 1},  // 0x80000000 is 0 in the 4-byte form
      {0x7FFFFFFFu, 0x7FFFFFFFu},                    // a sum past 2^32 in 32 bits
      {0x7FFFFFF0u, 0x20},        {5, 0},           {0, 1}};
  for (const auto& [name, value] : lengths) {
    check_rejected(join({begin(), record(kParams, 1, lying_pair(name, value)),
                         record(kParams, 1, {}), record(kStdin, 1, {})}),
                   FcgiRejection::kMalformed);
  }
  // A pair cut after its lengths' first byte of the 4-byte form.
  check_rejected(join({begin(), record(kParams, 1, {0x80, 0})}), FcgiRejection::kMalformed);
  // A pair split across two records: libfcgi would join them, the screen does not.
  const Bytes whole = pair("REQUEST_METHOD", "GET");
  const Bytes head(whole.begin(), whole.begin() + 5), tail(whole.begin() + 5, whole.end());
  check_rejected(join({begin(), record(kParams, 1, head), record(kParams, 1, tail)}),
                 FcgiRejection::kMalformed);
}

BOOST_AUTO_TEST_CASE(management_and_unknown_records_are_refused) {
  // FCGI_GET_VALUES naming FCGI_MAX_CONNS, eight times.
  Bytes get_values;
  for (int i = 0; i < 8; ++i) {
    const Bytes one = record(kGetValues, 0, pair("FCGI_MAX_CONNS", ""));
    get_values.insert(get_values.end(), one.begin(), one.end());
  }
  check_rejected(get_values, FcgiRejection::kManagement);
  check_rejected(begin(0), FcgiRejection::kManagement);  // request id 0
  check_rejected(join({begin(), record(12, 1, {})}), FcgiRejection::kManagement);
  check_rejected(record(255, 1, {}), FcgiRejection::kManagement);
}

BOOST_AUTO_TEST_CASE(records_out_of_their_place_are_malformed) {
  const Bytes params = record(kParams, 1, nginx_params());
  const Bytes params_end = record(kParams, 1, {});
  check_rejected(params, FcgiRejection::kMalformed);                      // no BEGIN first
  check_rejected(join({begin(), begin()}), FcgiRejection::kMalformed);    // a second BEGIN
  check_rejected(join({begin(1), begin(2)}), FcgiRejection::kMalformed);  // a second request
  check_rejected(join({begin(1), record(kParams, 2, {})}), FcgiRejection::kMalformed);
  check_rejected(join({begin(), params, record(kStdin, 1, {})}), FcgiRejection::kMalformed);
  check_rejected(join({begin(), params, params_end, params}), FcgiRejection::kMalformed);
  check_rejected(join({begin(), record(kStdout, 1, {})}), FcgiRejection::kMalformed);
  check_rejected(join({begin(), record(kEnd, 1, Bytes(8, 0))}), FcgiRejection::kMalformed);
  check_rejected(record(kBegin, 1, Bytes(8, 0), 0, 2), FcgiRejection::kMalformed);  // version 2
  check_rejected(begin(1, false, 2), FcgiRejection::kMalformed);  // role AUTHORIZER
  check_rejected(record(kBegin, 1, Bytes(16, 0)), FcgiRejection::kMalformed);
}

BOOST_AUTO_TEST_CASE(a_truncated_header_waits_and_an_abort_ends_the_request) {
  BOOST_TEST((screen(Bytes{1, kBegin, 0}).verdict == FcgiVerdict::kIncomplete));
  const FcgiScreen aborted = screen(join({begin(), record(kAbort, 1, {})}));
  BOOST_TEST((aborted.verdict == FcgiVerdict::kAborted));
  check_rejected(join({begin(1), record(kAbort, 2, {})}), FcgiRejection::kMalformed);
}

BOOST_AUTO_TEST_CASE(parameters_over_their_bound_are_refused_on_the_header_alone) {
  const FcgiLimits limits{.max_params_bytes = 1024, .max_stdin_bytes = 64};
  Bytes request = begin();
  const Bytes pair_of_1k = pair("X", std::string(1000, 'v'));
  const Bytes one = record(kParams, 1, pair_of_1k);
  request.insert(request.end(), one.begin(), one.end());
  BOOST_TEST((screen(request, limits).verdict == FcgiVerdict::kIncomplete));
  // The second record's header alone is enough: its content is never waited for.
  const Bytes second = record(kParams, 1, pair_of_1k);
  request.insert(request.end(), second.begin(), second.begin() + 8);
  check_rejected(request, FcgiRejection::kTooLarge, limits);
}

BOOST_AUTO_TEST_CASE(a_body_over_its_bound_is_refused) {
  const FcgiLimits limits{.max_params_bytes = 1024, .max_stdin_bytes = 64};
  check_rejected(join({begin(), record(kParams, 1, {}), record(kStdin, 1, Bytes(40, 'x')),
                       record(kStdin, 1, Bytes(40, 'x'))}),
                 FcgiRejection::kTooLarge, limits);
}

BOOST_AUTO_TEST_CASE(headers_and_padding_count_towards_the_request_bound) {
  // Records of one empty pair and 255 bytes of padding each: little content, many bytes.
  const FcgiLimits limits;
  Bytes request = begin();
  while (request.size() <= max_request_bytes(limits)) {
    const Bytes one = record(kParams, 1, {0, 0}, 255);
    request.insert(request.end(), one.begin(), one.end());
  }
  check_rejected(request, FcgiRejection::kTooLarge, limits);
}

BOOST_AUTO_TEST_CASE(rejections_have_metric_labels) {
  using connector::fastcgi::rejection_label;
  BOOST_TEST(rejection_label(FcgiRejection::kMalformed) == "malformed");
  BOOST_TEST(rejection_label(FcgiRejection::kTooLarge) == "too_large");
  BOOST_TEST(rejection_label(FcgiRejection::kManagement) == "management_record");
  BOOST_TEST(rejection_label(FcgiRejection::kDeadline) == "deadline");
}

// libfcgi does not skip the padding of FCGI_BEGIN_REQUEST, nor of the empty records that end
// PARAMS and STDIN: it would read that padding as a record the screen never saw. Each of these
// passed an earlier screen and then aborted the worker, smashed its stack (a GET_VALUES answer
// past libfcgi's 64-byte buffer) or held a thread in a read.
BOOST_AUTO_TEST_CASE(padding_libfcgi_would_read_as_a_record_is_malformed) {
  const Bytes params = record(kParams, 1, nginx_params());
  const Bytes end_params = record(kParams, 1, {});
  const Bytes end_stdin = record(kStdin, 1, {});
  // The padding of BEGIN holds a PARAMS header, whose content ends inside the screen's next
  // record: the pairs libfcgi reads there have a value length of 0x7ffffffe.
  const Bytes begin_padded_with_a_header = {1, kBegin,  0, 1, 0, 8,  8, 0,   // padding 8
                                            0, 1,       0, 0, 0, 0,  0, 0,   // responder
                                            1, kParams, 0, 1, 0, 14, 0, 0};  // the padding
  check_rejected(join({begin_padded_with_a_header,
                       Bytes{1, kParams, 0, 1, 0, 7, 0, 0, 0, 5, 0xFF, 0xFF, 0xFF, 0xFE, 0},
                       end_params, end_stdin}),
                 FcgiRejection::kMalformed);
  // FCGI_GET_VALUES in the padding of BEGIN or of the empty PARAMS record.
  Bytes get_values = {1, kGetValues, 0, 0, 0, 0x88, 0, 0};
  for (int i = 0; i < 8; ++i) {
    const Bytes one = pair("FCGI_MAX_CONNS", "x");
    get_values.insert(get_values.end(), one.begin(), one.end());
  }
  Bytes padded_begin = begin();
  padded_begin[6] = static_cast<std::uint8_t>(get_values.size());
  check_rejected(join({padded_begin, get_values, params, end_params, end_stdin}),
                 FcgiRejection::kMalformed);
  // A STDIN header of 1000 bytes in the empty PARAMS record's padding: libfcgi waits for them.
  check_rejected(join({begin(), params, Bytes{1, kParams, 0, 1, 0, 0, 8, 0},
                       Bytes{1, kStdin, 0, 1, 0x03, 0xE8, 0, 0}, end_stdin}),
                 FcgiRejection::kMalformed);
  check_rejected(join({begin(), params, end_params, Bytes{1, kStdin, 0, 1, 0, 0, 1, 0}, {0}}),
                 FcgiRejection::kMalformed);
  // An ABORT ends the request where it is: libfcgi reads nothing after it, padding or not.
  BOOST_TEST((screen(join({begin(), record(kAbort, 1, {}, 8)})).verdict == FcgiVerdict::kAborted));
}

// Every look at a waiting request screens it from its first byte: few records keep that cheap.
BOOST_AUTO_TEST_CASE(more_records_than_nginx_sends_are_refused) {
  Bytes request = begin();
  for (std::size_t i = 1; i < connector::fastcgi::kMaxRecords - 2; ++i) {
    const Bytes one = record(kParams, 1, pair("A", "b"));
    request.insert(request.end(), one.begin(), one.end());
  }
  // 16 records in all: passed.
  BOOST_TEST((screen(join({request, record(kParams, 1, {}), record(kStdin, 1, {})})).verdict ==
              FcgiVerdict::kRequest));
  // Sixteen, and the header of a seventeenth: refused on that header.
  const Bytes one = record(kParams, 1, pair("A", "b"));
  check_rejected(join({request, one, one, Bytes{1, kParams, 0, 1, 0, 0, 0, 0}}),
                 FcgiRejection::kTooLarge);
}

BOOST_AUTO_TEST_CASE(an_incomplete_request_says_how_many_bytes_it_needs) {
  const Bytes request = nginx_request();
  BOOST_TEST(screen(Bytes(request.begin(), request.begin() + 3)).need_bytes == 8u);
  BOOST_TEST(screen(Bytes(request.begin(), request.begin() + 9)).need_bytes == 16u);
  // The PARAMS record: its header, 113 bytes of pairs and 7 of padding.
  BOOST_TEST(screen(Bytes(request.begin(), request.begin() + 20)).need_bytes == 24u);
  BOOST_TEST(screen(Bytes(request.begin(), request.begin() + 30)).need_bytes == 16u + 128u);
}

// The requests the screen passes, as libfcgi reads them: accepted, read to the end of the body
// without an error, the same name-value pairs and body. (fuzz_fcgi_libfcgi does the same on
// whatever the fuzzer makes.)
BOOST_AUTO_TEST_CASE(libfcgi_reads_a_passed_request_as_the_screen_does) {
  const Bytes long_value = pair(std::string(200, 'N'), std::string(70000 / 8, 'v'));
  const Bytes body(1000, 'x');
  const std::vector<Bytes> passed = {
      nginx_request(1, false),
      nginx_request(7, true),
      join({begin(), record(kParams, 1, nginx_params(), 7), record(kParams, 1, pair("A", ""), 1),
            record(kParams, 1, {}), record(kStdin, 1, body, 0), record(kStdin, 1, body, 5),
            record(kStdin, 1, {})}),
      join({begin(), record(kParams, 1, long_value, 3), record(kParams, 1, {}),
            record(kStdin, 1, {})}),
      join({begin(), record(kParams, 1, {}), record(kStdin, 1, {})}),
  };
  for (const Bytes& request : passed) {
    std::vector<std::string> pairs;
    const connector::fastcgi::PairSink sink = [&pairs](std::string_view name,
                                                       std::string_view value) {
      pairs.push_back(connector::testing::libfcgi_entry(name, value));
    };
    const FcgiScreen screened = screen_fcgi_request(request, {}, &sink);
    BOOST_TEST_REQUIRE((screened.verdict == FcgiVerdict::kRequest));
    BOOST_TEST(pairs.size() == screened.pairs);
    // Whole, and split into reads of 1, 7 and 100 bytes.
    for (const std::size_t chunk :
         {std::size_t{4096}, std::size_t{1}, std::size_t{7}, std::size_t{100}}) {
      const auto read = connector::testing::read_with_libfcgi(request, chunk);
      BOOST_TEST(read.accepted);
      BOOST_TEST(!read.error);
      BOOST_TEST(!read.bytes_left);
      BOOST_TEST(read.keep_connection == screened.keep_connection);
      BOOST_TEST(read.params == pairs, boost::test_tools::per_element());
      BOOST_TEST(read.stdin_bytes == screened.stdin_bytes);
    }
  }
  BOOST_TEST(screen(passed[2]).pairs == 5u);
  BOOST_TEST(screen(passed[2]).stdin_bytes == 2000u);
}
