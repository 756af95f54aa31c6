#pragma once
// Validators: each turns one raw parameter value into a typed value or throws an ApiError 400
// naming the parameter. Messages never echo the value (it may be 4 kB of anything), except
// where the contract shows a corrected form.
#include <cstdint>
#include <string>
#include <string_view>

#include "chain/address.h"
#include "domain/history.h"
#include "domain/reference_data.h"

namespace connector::api {

inline constexpr std::uint32_t kDefaultPageSize = 20;
inline constexpr std::uint32_t kMaxPageSize = 100;

// An unsigned decimal integer that fits in 64 bits (leading zeros allowed, no sign).
std::uint64_t parse_uint64(std::string_view name, std::string_view value);

// 0 means the default (20); above 100 is served as 100.
std::uint32_t parse_page_size(std::string_view name, std::string_view value);

// "0x" + 40 hex digits, any case.
chain::Address parse_address(std::string_view name, std::string_view value);

// "0x" + 64 hex digits, any case -> lower case.
std::string parse_tx_hash(std::string_view name, std::string_view value);

// A history record hash: 64 hex digits, any case, with or without "0x" -> lower case, no "0x".
std::string parse_record_hash(std::string_view name, std::string_view value);

// A slug of one of this deployment's chains.
const domain::Chain& parse_slug(std::string_view name, std::string_view value,
                                const domain::ReferenceData& data);

// Deposit, Pending, Confirmed or Error in any case -> the status.
domain::HistoryStatus parse_status(std::string_view name, std::string_view value);

// ASC or DESC in any case.
domain::SortOrder parse_order(std::string_view name, std::string_view value);

}  // namespace connector::api
