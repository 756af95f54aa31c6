// Fuzzes every parameter validator of src/api/params.h with the same value. Each one either
// returns a value that matches a plain reference check of the input, or throws the ApiError 400
// invalid_parameter naming the parameter, with a message that does not echo the value (the same
// message as for any other invalid value). Any other exception is a crash.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "api/params.h"
#include "fuzz_check.h"
#include "http/api_error.h"

namespace {

using connector::http::ApiError;
namespace api = connector::api;
namespace domain = connector::domain;

constexpr std::string_view kName = "source_sender";
constexpr std::string_view kTooLarge =
    "source_sender is too large (the maximum is 18446744073709551615)";

bool is_hex(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
}

bool is_digits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

const domain::ReferenceData& reference() {
  static const domain::ReferenceData data = [] {
    domain::ReferenceData d;
    d.chains.push_back({.ref = 1, .slug = "unitcore", .network = "UNITCore", .chain_id = 36888});
    d.chains.push_back({.ref = 2, .slug = "unitiot", .network = "UNITIoT", .chain_id = 1012});
    return d;
  }();
  return data;
}

// Runs one validator: its result (checked by `accepted`) or its error (checked here). Returns
// whether the value was accepted.
template <typename Result>
bool run(const std::function<Result(std::string_view)>& validate, std::string_view value,
         const std::function<void(const Result&)>& accepted, bool too_large_allowed = false) {
  static constexpr std::string_view kInvalid = "\x01";
  try {
    accepted(validate(value));
    return true;
  } catch (const ApiError& e) {
    FUZZ_CHECK(e.status() == 400 && e.code() == "invalid_parameter" && e.param() == kName);
    std::string usual;
    try {
      validate(kInvalid);
    } catch (const ApiError& reference_error) {
      usual = reference_error.what();
    }
    FUZZ_CHECK(e.what() == usual || (too_large_allowed && e.what() == kTooLarge));
    return false;
  }
}

void check_uint64(std::string_view value) {
  std::uint64_t expected = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), expected);
  const bool valid = is_digits(value) && error == std::errc() && end == value.data() + value.size();
  const bool ok =
      run<std::uint64_t>([](std::string_view v) { return api::parse_uint64(kName, v); }, value,
                         [&](const std::uint64_t& got) { FUZZ_CHECK(got == expected); }, true);
  FUZZ_CHECK(ok == valid);

  const bool page_ok = run<std::uint32_t>(
      [](std::string_view v) { return api::parse_page_size(kName, v); }, value,
      [&](const std::uint32_t& got) {
        FUZZ_CHECK(got >= 1 && got <= api::kMaxPageSize);
        FUZZ_CHECK(got == (expected == 0 ? api::kDefaultPageSize
                                         : std::min<std::uint64_t>(expected, api::kMaxPageSize)));
      },
      true);
  FUZZ_CHECK(page_ok == valid);
}

void check_hex_validators(std::string_view value) {
  const bool address_shape =
      value.size() == 42 && value.starts_with("0x") && is_hex(value.substr(2));
  const bool address_ok = run<connector::chain::Address>(
      [](std::string_view v) { return api::parse_address(kName, v); }, value,
      [&](const connector::chain::Address& got) { FUZZ_CHECK(got.lower() == lower(value)); });
  FUZZ_CHECK(address_ok == address_shape);

  const bool tx_shape = value.size() == 66 && value.starts_with("0x") && is_hex(value.substr(2));
  const bool tx_ok =
      run<std::string>([](std::string_view v) { return api::parse_tx_hash(kName, v); }, value,
                       [&](const std::string& got) { FUZZ_CHECK(got == lower(value)); });
  FUZZ_CHECK(tx_ok == tx_shape);

  std::string_view bare = value;
  if (bare.starts_with("0x") || bare.starts_with("0X")) bare.remove_prefix(2);
  const bool record_shape = bare.size() == 64 && is_hex(bare);
  const bool record_ok =
      run<std::string>([](std::string_view v) { return api::parse_record_hash(kName, v); }, value,
                       [&](const std::string& got) { FUZZ_CHECK(got == lower(bare)); });
  FUZZ_CHECK(record_ok == record_shape);
}

void check_words(std::string_view value) {
  const bool slug_known = value == "unitcore" || value == "unitiot";
  const bool slug_ok = run<std::string>(
      [](std::string_view v) { return api::parse_slug(kName, v, reference()).slug; }, value,
      [&](const std::string& got) { FUZZ_CHECK(got == value); });
  FUZZ_CHECK(slug_ok == slug_known);

  const std::string folded = lower(value);
  const bool status_known =
      folded == "deposit" || folded == "pending" || folded == "confirmed" || folded == "error";
  const bool status_ok = run<std::string_view>(
      [](std::string_view v) { return domain::status_name(api::parse_status(kName, v)); }, value,
      [&](const std::string_view& got) { FUZZ_CHECK(lower(got) == folded); });
  FUZZ_CHECK(status_ok == status_known);

  const bool order_known = folded == "asc" || folded == "desc";
  const bool order_ok = run<domain::SortOrder>(
      [](std::string_view v) { return api::parse_order(kName, v); }, value,
      [&](const domain::SortOrder& got) {
        FUZZ_CHECK(got == (folded == "asc" ? domain::SortOrder::kAscending
                                           : domain::SortOrder::kDescending));
      });
  FUZZ_CHECK(order_ok == order_known);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view value(reinterpret_cast<const char*>(data), size);
  check_uint64(value);
  check_hex_validators(value);
  check_words(value);
  return 0;
}
