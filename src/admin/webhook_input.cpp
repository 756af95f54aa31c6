#include "admin/webhook_input.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <stdexcept>

#include "chain/address.h"
#include "domain/history.h"

namespace connector::admin {
namespace {

bool blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && blank(text.back())) text.remove_suffix(1);
  return text;
}

// The text as a message may quote it: printable ASCII, at most 50 characters.
std::string quoted(std::string_view text) {
  constexpr std::size_t kMaxQuoted = 50;
  std::string out = "'";
  for (const char c : text.substr(0, kMaxQuoted)) {
    out += std::isprint(static_cast<unsigned char>(c)) != 0 ? c : '?';
  }
  return out + (text.size() > kMaxQuoted ? "...'" : "'");
}

bool mixed_case(std::string_view text) {
  const auto is_lower = [](char c) { return c >= 'a' && c <= 'f'; };
  const auto is_upper = [](char c) { return c >= 'A' && c <= 'F'; };
  const auto digits = text.substr(2);
  return std::any_of(digits.begin(), digits.end(), is_lower) &&
         std::any_of(digits.begin(), digits.end(), is_upper);
}

// The address lower-case; the reason it is not one otherwise.
std::string lower_address(std::string_view text) {
  const auto address = chain::Address::parse(text);
  if (!address)
    throw std::invalid_argument(quoted(text) + " is not an address (0x and 40 hex digits)");
  if (mixed_case(text) && !chain::is_checksummed(text)) {
    throw std::invalid_argument(quoted(text) + " is in mixed case but not its EIP-55 checksum (" +
                                address->checksummed() + "): a typo?");
  }
  return address->lower();
}

// Adds an address; refused once there are more than kMaxWebhookAddresses distinct ones.
void add_once(std::set<std::string>& addresses, std::string address) {
  addresses.insert(std::move(address));
  if (addresses.size() > kMaxWebhookAddresses) {
    throw std::invalid_argument("more than " + std::to_string(kMaxWebhookAddresses) + " addresses");
  }
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::vector<std::string> parse_address_file(std::string_view text) {
  std::set<std::string> addresses;
  std::size_t number = 0;
  while (!text.empty()) {
    const std::size_t end = std::min(text.find('\n'), text.size());
    std::string_view line = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    ++number;
    line = trimmed(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    try {
      add_once(addresses, lower_address(line));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("line " + std::to_string(number) + ": " + e.what());
    }
  }
  if (addresses.empty()) throw std::invalid_argument("no address in it");
  return {addresses.begin(), addresses.end()};
}

std::vector<std::string> parse_recipients(std::span<const std::string> values) {
  std::set<std::string> addresses;
  for (const auto& value : values) add_once(addresses, lower_address(value));
  return {addresses.begin(), addresses.end()};
}

std::string parse_statuses(std::string_view text) {
  std::vector<bool> chosen(std::size(domain::kHistoryStatuses), false);
  while (true) {
    const std::size_t comma = std::min(text.find(','), text.size());
    const std::string_view raw = trimmed(text.substr(0, comma));
    const std::string item = lower(raw);
    const auto* found =
        std::find_if(std::begin(domain::kHistoryStatuses), std::end(domain::kHistoryStatuses),
                     [&](std::string_view name) { return lower(name) == item; });
    if (found == std::end(domain::kHistoryStatuses)) {
      throw std::invalid_argument(
          (item.empty() ? std::string("an empty status") : "unknown status " + quoted(raw)) +
          " (the statuses: " + all_statuses() + ")");
    }
    chosen[static_cast<std::size_t>(found - std::begin(domain::kHistoryStatuses))] = true;
    if (comma == text.size()) break;
    text.remove_prefix(comma + 1);
  }
  std::string statuses;
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    if (!chosen[i]) continue;
    if (!statuses.empty()) statuses += ',';
    statuses += domain::kHistoryStatuses[i];
  }
  return statuses;
}

std::string all_statuses() {
  std::string statuses;
  for (const auto name : domain::kHistoryStatuses) {
    if (!statuses.empty()) statuses += ',';
    statuses += name;
  }
  return statuses;
}

}  // namespace connector::admin
