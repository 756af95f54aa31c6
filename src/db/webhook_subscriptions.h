#pragma once
// Webhook subscriptions as the operator manages them (`connector-admin webhook ...`): the rows
// of webhook_subscriptions, webhook_addresses and webhook_queues, and the secret in the
// secrets database, `<db>_secrets`.webhook_secrets (sql/migrations/0008, docs/schema.md). Each
// change is one transaction on the primary, as the admin account (the only one that may
// write them and read the secrets); prepared statements only. The deliverer's own reads and
// writes of these tables are not here (src/webhooks/).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "db/connection.h"

namespace connector::db {

// "<database>_secrets"; DatabaseError when `database` is not [A-Za-z0-9_]+ (it is written into
// the statements' text, as scripts/migrate allows only such names).
std::string secrets_database(std::string_view database);

struct NewSubscription {
  std::string url;
  std::string statuses;                // webhook_subscriptions.statuses: "Deposit,Pending"
  std::vector<std::string> addresses;  // lower-case, each once
  std::string secret;
};

struct AddedSubscription {
  std::uint64_t id = 0;
  std::uint64_t acked_seq = 0;  // the end of the change feed: it is sent the changes after it
};

// The subscription, its addresses, its queue (acked_seq: the feed's end now) and its secret,
// in one transaction. `database`: the service database (the config's db_name).
AddedSubscription add_subscription(Connection& db, std::string_view database,
                                   const NewSubscription& subscription);

// A subscription and its queue, as `webhook list` shows them (never its secret).
struct SubscriptionState {
  std::uint64_t id = 0;
  std::string url;
  bool enabled = false;
  std::string statuses;
  std::uint64_t addresses = 0;
  std::uint64_t acked_seq = 0;
  std::uint64_t delivered = 0;
  std::uint64_t retried = 0;
  std::int64_t failing_since_us = 0;  // 0: not failing
  std::uint64_t lost_before_seq = 0;
  std::uint64_t replay_from_seq = 0;  // 0: no replay waiting for the deliverer
  std::string last_status;            // "": no attempt yet
  std::int64_t last_attempt_us = 0;
};

struct SubscriptionList {
  std::uint64_t feed_end = 0;                    // the newest change's seq (0: the feed is empty)
  std::vector<SubscriptionState> subscriptions;  // by id
};

SubscriptionList list_subscriptions(Connection& db);

enum class Change { kDone, kAlready, kNotFound };

// Enables or disables a subscription (kAlready: it was so).
Change set_enabled(Connection& db, std::uint64_t id, bool enabled);

// The subscription, with its addresses and queue, and its secret, in one transaction
// (kAlready is never returned).
Change remove_subscription(Connection& db, std::string_view database, std::uint64_t id);

struct ReplayRequest {
  enum class Outcome { kRequested, kNotFound, kFeedEmpty, kBeforeFeed, kAfterFeed, kAheadOfCursor };
  Outcome outcome = Outcome::kNotFound;
  std::uint64_t acked_seq = 0;   // the subscription's cursor
  std::uint64_t feed_start = 0;  // the oldest change still in the feed (when not empty)
  std::uint64_t feed_end = 0;    // the newest
};

// Asks the deliverer to send again the changes with seq >= since (webhook_queues
// .replay_from_seq), and clears lost_before_seq; refused unless `since` is in the feed and at
// most one past the cursor (a replay goes back; forward it would skip changes unsent).
ReplayRequest request_replay(Connection& db, std::uint64_t id, std::uint64_t since);

}  // namespace connector::db
