#include "db/webhook_store.h"

namespace connector::db {
namespace {

// The primary's clock in unix microseconds: expiry is judged on one clock for every node.
constexpr std::string_view kNowUs = "FLOOR(UNIX_TIMESTAMP(NOW(6)) * 1000000)";

Param nullable(std::int64_t value) {
  if (value == 0) return std::monostate{};
  return static_cast<std::uint64_t>(value);
}

Param nullable(const std::string& value) {
  if (value.empty()) return std::monostate{};
  return value;
}

const Column<WebhookSubscriptionRow> kSubscriptionColumns[] = {
    field<&WebhookSubscriptionRow::id>("s.id"),
    field<&WebhookSubscriptionRow::url>("s.url"),
    field<&WebhookSubscriptionRow::statuses>("s.statuses + 0"),
    field<&WebhookSubscriptionRow::secret>("k.secret"),
    field<&WebhookSubscriptionRow::acked_seq>("q.acked_seq"),
    field<&WebhookSubscriptionRow::attempt>("q.attempt"),
    field<&WebhookSubscriptionRow::retrying_since_us>("COALESCE(q.retrying_since_us, 0)"),
    field<&WebhookSubscriptionRow::failing_since_us>("COALESCE(q.failing_since_us, 0)"),
    field<&WebhookSubscriptionRow::lost_before_seq>("q.lost_before_seq"),
    field<&WebhookSubscriptionRow::replay_from_seq>("COALESCE(q.replay_from_seq, 0)"),
    field<&WebhookSubscriptionRow::delivered>("q.delivered"),
    field<&WebhookSubscriptionRow::retried>("q.retried"),
};

std::string store_statement() {
  return "UPDATE webhook_queues q JOIN webhook_lease l ON l.id = 1 AND l.holder = ? AND "
         "l.token = ? SET q.acked_seq = ?, q.attempt = ?, q.retrying_since_us = ?, "
         "q.failing_since_us = ?, q.delivered = q.delivered + ?, q.retried = q.retried + ?, "
         "q.last_status = COALESCE(?, q.last_status), "
         "q.last_attempt_us = COALESCE(?, q.last_attempt_us), "
         "q.replay_from_seq = IF(q.replay_from_seq <=> ?, NULL, q.replay_from_seq) "
         "WHERE q.subscription_id = ?";
}

}  // namespace

std::vector<WebhookSubscriptionRow> enabled_webhooks(Connection& db,
                                                     const std::string& secrets_db) {
  const std::string sql =
      "SELECT " +
      select_list(std::span<const Column<WebhookSubscriptionRow>>(kSubscriptionColumns)) +
      " FROM webhook_subscriptions s JOIN webhook_queues q ON "
      "q.subscription_id = s.id JOIN `" +
      secrets_db +
      "`.webhook_secrets k ON k.subscription_id = s.id WHERE s.enabled "
      "ORDER BY s.id";
  return db.run([&](Connection& session) {
    return session.rows(sql, {},
                        std::span<const Column<WebhookSubscriptionRow>>(kSubscriptionColumns));
  });
}

std::vector<WebhookSubscriptionRow> disabled_webhooks(Connection& db) {
  static const std::string sql =
      "SELECT q.subscription_id, q.acked_seq, q.delivered, q.retried, q.lost_before_seq FROM "
      "webhook_subscriptions s JOIN webhook_queues q ON q.subscription_id = s.id WHERE NOT "
      "s.enabled ORDER BY s.id";
  return db.run([&](Connection& session) {
    std::vector<WebhookSubscriptionRow> rows;
    auto rs = session.query(sql);
    while (rs->next()) {
      WebhookSubscriptionRow row;
      row.id = read_value<std::uint64_t>(*rs, 1);
      row.acked_seq = read_value<std::uint64_t>(*rs, 2);
      row.delivered = read_value<std::uint64_t>(*rs, 3);
      row.retried = read_value<std::uint64_t>(*rs, 4);
      row.lost_before_seq = read_value<std::uint64_t>(*rs, 5);
      rows.push_back(std::move(row));
    }
    return rows;
  });
}

std::vector<std::string> webhook_addresses(Connection& db, std::uint64_t subscription) {
  static const std::string sql =
      "SELECT LOWER(address) FROM webhook_addresses WHERE subscription_id = ? ORDER BY address";
  return db.run([&](Connection& session) {
    std::vector<std::string> addresses;
    auto rs = session.query(sql, {subscription});
    while (rs->next()) addresses.push_back(read_value<std::string>(*rs, 1));
    return addresses;
  });
}

std::optional<std::uint64_t> claim_webhook_lease(Connection& db, const std::string& holder,
                                                 std::uint64_t lease_ms) {
  // The token moves only when the holder changes (the assignments run left to right).
  static const std::string claim =
      "UPDATE webhook_lease SET token = token + (holder <> ?), holder = ?, expires_us = " +
      std::string(kNowUs) + " + ? WHERE id = 1 AND (holder = ? OR expires_us < " +
      std::string(kNowUs) + ")";
  static const std::string token = "SELECT token FROM webhook_lease WHERE id = 1 AND holder = ?";
  return db.run([&](Connection& session) -> std::optional<std::uint64_t> {
    session.execute(claim, {holder, holder, lease_ms * 1000, holder});
    auto rs = session.query(token, {holder});
    if (!rs->next()) return std::nullopt;
    return read_value<std::uint64_t>(*rs, 1);
  });
}

void release_webhook_lease(Connection& db, const std::string& holder) {
  static const std::string sql =
      "UPDATE webhook_lease SET expires_us = 0 WHERE id = 1 AND holder = ?";
  db.run([&](Connection& session) { session.execute(sql, {holder}); });
}

bool store_webhook_queues(Connection& db, const std::string& holder, std::uint64_t token,
                          const std::vector<WebhookQueueWrite>& writes) {
  static const std::string sql = store_statement();
  // The lease row locked for the transaction: no takeover between this check and the writes
  // (a plain read would see the transaction's snapshot, which a takeover may have passed).
  static const std::string held =
      "SELECT 1 FROM webhook_lease WHERE id = 1 AND holder = ? AND token = ? FOR UPDATE";
  return db.run([&](Connection& session) {
    session.begin();
    try {
      auto rs = session.query(held, {holder, token});
      const bool holding = rs->next();
      if (holding) {
        for (const auto& w : writes) {
          session.execute(
              sql, {holder, token, w.acked_seq, w.attempt, nullable(w.retrying_since_us),
                    nullable(w.failing_since_us), w.delivered, w.retried, nullable(w.last_status),
                    nullable(w.last_attempt_us),
                    w.replay_applied == 0 ? Param{std::monostate{}} : Param{w.replay_applied},
                    w.subscription});
        }
      }
      session.commit();
      return holding;
    } catch (...) {
      session.rollback();
      throw;
    }
  });
}

}  // namespace connector::db
