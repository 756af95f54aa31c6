#pragma once
// The webhook deliverer's reads and writes on the primary (sql/migrations/0008): the lease that
// makes one deliverer of the fleet the one that delivers, the enabled subscriptions with their
// cursors and secrets, their addresses, and the cursors it moves. Run with the
// connector_webhooks account (sql/accounts.sql.in): it may read, and write only
// webhook_queues and webhook_lease.
//
// The lease is a row with a holder, a token and an expiry on the primary's clock: a deliverer
// renews it while it holds it, and takes it when it has expired (its holder dead, hung or cut
// off), adding 1 to the token. Every cursor write joins the lease row on the holder and the
// token it took, so a holder that lost the lease while it was stopped (SIGSTOP, a long pause)
// writes nothing over its successor's cursors.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "db/connection.h"
#include "db/webhook_subscriptions.h"  // secrets_database()

namespace connector::db {

struct WebhookSubscriptionRow {
  std::uint64_t id = 0;
  std::string url;
  std::uint64_t statuses = 0;  // the SET as its bits: 1 Deposit, 2 Pending, 4 Confirmed, 8 Error
  std::string secret;
  std::uint64_t acked_seq = 0;
  std::uint64_t attempt = 0;
  std::int64_t retrying_since_us = 0;  // 0: none
  std::int64_t failing_since_us = 0;   // 0: not failing
  std::uint64_t lost_before_seq = 0;
  std::uint64_t replay_from_seq = 0;  // 0: no replay asked for
  std::uint64_t delivered = 0;
  std::uint64_t retried = 0;
};

// The enabled subscriptions, by id, each with its cursor and secret.
std::vector<WebhookSubscriptionRow> enabled_webhooks(Connection& db, const std::string& secrets_db);
// The disabled subscriptions' stored figures (id, acked_seq, delivered, retried,
// lost_before_seq; the rest zero): the metrics show them too, a loss mark above all.
std::vector<WebhookSubscriptionRow> disabled_webhooks(Connection& db);

// A subscription's addresses (lowercase, as stored).
std::vector<std::string> webhook_addresses(Connection& db, std::uint64_t subscription);

// Takes or renews the lease for `holder` for lease_ms; the token it holds it with, nullopt when
// another deliverer holds it.
std::optional<std::uint64_t> claim_webhook_lease(Connection& db, const std::string& holder,
                                                 std::uint64_t lease_ms);
// Lets another deliverer take it at once (a clean stop).
void release_webhook_lease(Connection& db, const std::string& holder);

// A cursor to store; the counts are added to the stored ones.
struct WebhookQueueWrite {
  std::uint64_t subscription = 0;
  std::uint64_t acked_seq = 0;
  std::uint64_t attempt = 0;
  std::int64_t retrying_since_us = 0;  // 0: NULL
  std::int64_t failing_since_us = 0;   // 0: NULL
  std::uint64_t delivered = 0;
  std::uint64_t retried = 0;
  std::string last_status;           // empty: unchanged
  std::int64_t last_attempt_us = 0;  // 0: unchanged
  std::uint64_t replay_applied = 0;  // the replay_from_seq it applied (cleared if still that)
};
// Stores the cursors in one transaction, fenced by the lease; false when the lease is no
// longer (holder, token) and nothing was written.
bool store_webhook_queues(Connection& db, const std::string& holder, std::uint64_t token,
                          const std::vector<WebhookQueueWrite>& writes);

}  // namespace connector::db
