#include "admin/webhook_list.h"

#include <algorithm>
#include <array>
#include <ctime>
#include <vector>

namespace connector::admin {
namespace {

constexpr std::array<std::string_view, 14> kHeader = {
    "id",           "enabled", "statuses",      "addresses",       "acked_seq",   "lag",
    "delivered",    "retried", "failing_since", "lost_before_seq", "replay_from", "last_status",
    "last_attempt", "url"};

using Line = std::array<std::string, kHeader.size()>;

Line line_of(const db::SubscriptionState& s, std::uint64_t feed_end) {
  const auto number = [](std::uint64_t value) { return std::to_string(value); };
  return {number(s.id),
          s.enabled ? "yes" : "no",
          s.statuses,
          number(s.addresses),
          number(s.acked_seq),
          number(feed_end > s.acked_seq ? feed_end - s.acked_seq : 0),
          number(s.delivered),
          number(s.retried),
          utc_seconds(s.failing_since_us),
          number(s.lost_before_seq),
          s.replay_from_seq == 0 ? "-" : number(s.replay_from_seq),
          s.last_status.empty() ? "-" : s.last_status,
          utc_seconds(s.last_attempt_us),
          s.url};
}

}  // namespace

std::string utc_seconds(std::int64_t unix_us) {
  if (unix_us == 0) return "-";
  const std::time_t seconds = static_cast<std::time_t>(unix_us / 1'000'000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  const std::size_t n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return std::string(text, n);
}

std::string format_subscription_list(const db::SubscriptionList& list) {
  std::vector<Line> lines;
  lines.reserve(list.subscriptions.size() + 1);
  Line header;
  std::copy(kHeader.begin(), kHeader.end(), header.begin());
  lines.push_back(header);
  for (const auto& s : list.subscriptions) lines.push_back(line_of(s, list.feed_end));
  std::array<std::size_t, kHeader.size()> widths{};
  for (const auto& line : lines) {
    for (std::size_t i = 0; i < line.size(); ++i) widths[i] = std::max(widths[i], line[i].size());
  }
  std::string out;
  for (const auto& line : lines) {
    for (std::size_t i = 0; i + 1 < line.size(); ++i) {
      out += line[i];
      out.append(widths[i] - line[i].size() + 2, ' ');
    }
    out += line.back();
    out += '\n';
  }
  return out;
}

}  // namespace connector::admin
