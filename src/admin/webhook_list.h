#pragma once
// `connector-admin webhook list`'s table: a header line, then a line per subscription, columns
// separated by two spaces or more and padded to line up, the URL last. Never a secret (the
// list holds none). Pure, so the format is unit-tested.
#include <string>

#include "db/webhook_subscriptions.h"

namespace connector::admin {

// Columns:
//   id, enabled (yes/no), statuses, addresses (how many it follows), acked_seq, lag (changes of
//   the feed after acked_seq), delivered, retried (all time), failing_since (UTC, to the second,
//   or -), lost_before_seq (0: nothing lost), replay_from (a replay the deliverer has not
//   applied yet, or -), last_status (the last attempt's, or -), last_attempt (UTC or -), url
std::string format_subscription_list(const db::SubscriptionList& list);

// A unix time in microseconds as "2024-05-01T12:00:00Z"; "-" for 0.
std::string utc_seconds(std::int64_t unix_us);

}  // namespace connector::admin
