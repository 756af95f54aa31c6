#pragma once
// What `connector-admin webhook add` reads besides its URL: the recipients a subscription
// follows (an --addresses file, or --recipient values) and the record states it is sent
// (--statuses). Pure: text in, the values to store out, or std::invalid_argument with a message
// that names the line or the value.
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace connector::admin {

// The most recipients one subscription follows, and the largest --addresses file read (one
// address a line is 43 bytes: room for comments and Windows line ends beside the most).
inline constexpr std::size_t kMaxWebhookAddresses = 100'000;
inline constexpr std::size_t kMaxAddressFileBytes = 8u << 20;

// An --addresses file: one address a line, "0x" and 40 hex digits in any case (mixed case only
// as its EIP-55 checksum, which catches a typo); blank lines, and everything from a '#' on, are
// ignored; spaces, tabs and a CR at either end of a line too. The addresses lower-case, sorted,
// each once. Refused: a line that is not an address ("line 7: ..."), no address at all, more
// than kMaxWebhookAddresses.
std::vector<std::string> parse_address_file(std::string_view text);

// --recipient values, by the same rules (each value one address).
std::vector<std::string> parse_recipients(std::span<const std::string> values);

// --statuses: history statuses (Deposit, Pending, Confirmed, Error; any case) separated by
// commas, each once or more. The value of webhook_subscriptions.statuses: the names as the
// schema spells them, in its order, joined by commas ("Deposit,Confirmed").
std::string parse_statuses(std::string_view text);

// Every status: --statuses' default.
std::string all_statuses();

}  // namespace connector::admin
