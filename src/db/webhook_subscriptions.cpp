#include "db/webhook_subscriptions.h"

#include <algorithm>
#include <span>
#include <tuple>
#include <utility>

#include "db/write_statement.h"

namespace connector::db {
namespace {

// One transaction: committed when work returns, rolled back when it throws. Not run(): a write
// repeated after a connection lost during its commit could be written twice.
template <typename Work>
auto in_transaction(Connection& db, Work&& work) -> decltype(work()) {
  db.begin();
  try {
    auto result = work();
    db.commit();
    return result;
  } catch (...) {
    db.rollback();
    throw;
  }
}

std::uint64_t first_number(Connection& db, const std::string& sql, const Params& params = {}) {
  auto rs = db.query(sql, params);
  return rs->next() ? read_value<std::uint64_t>(*rs, 1) : 0;
}

// The feed's oldest and newest seq; 0 and 0 when it is empty. A plain (consistent) read: it
// locks no change, so the nodes' writes never wait for an operator's command.
std::pair<std::uint64_t, std::uint64_t> feed_range(Connection& db) {
  auto rs = db.query("SELECT COALESCE(MIN(seq), 0), COALESCE(MAX(seq), 0) FROM history_changes");
  if (!rs->next()) return {0, 0};
  return {read_value<std::uint64_t>(*rs, 1), read_value<std::uint64_t>(*rs, 2)};
}

void insert_addresses(Connection& db, std::uint64_t id, std::span<const std::string> addresses) {
  static constexpr std::string_view kColumns[] = {"subscription_id", "address"};
  constexpr std::size_t kRowsPerStatement = 500;
  for (std::size_t first = 0; first < addresses.size(); first += kRowsPerStatement) {
    const auto chunk =
        addresses.subspan(first, std::min(kRowsPerStatement, addresses.size() - first));
    Params params;
    params.reserve(chunk.size() * 2);
    for (const auto& address : chunk) {
      params.emplace_back(id);
      params.emplace_back(address);
    }
    db.execute(insert_sql("webhook_addresses", kColumns, 2, chunk.size(), OnDuplicate::kFail),
               params);
  }
}

constexpr Column<SubscriptionState> kStateColumns[] = {
    field<&SubscriptionState::id>("s.id"),
    field<&SubscriptionState::url>("s.url"),
    field<&SubscriptionState::enabled>("s.enabled"),
    field<&SubscriptionState::statuses>("s.statuses"),
    field<&SubscriptionState::addresses>(
        "(SELECT COUNT(*) FROM webhook_addresses a WHERE a.subscription_id = s.id)"),
    field<&SubscriptionState::acked_seq>("COALESCE(q.acked_seq, 0)"),
    field<&SubscriptionState::delivered>("COALESCE(q.delivered, 0)"),
    field<&SubscriptionState::retried>("COALESCE(q.retried, 0)"),
    field<&SubscriptionState::failing_since_us>("COALESCE(q.failing_since_us, 0)"),
    field<&SubscriptionState::lost_before_seq>("COALESCE(q.lost_before_seq, 0)"),
    field<&SubscriptionState::replay_from_seq>("COALESCE(q.replay_from_seq, 0)"),
    field<&SubscriptionState::last_status>("COALESCE(q.last_status, '')"),
    field<&SubscriptionState::last_attempt_us>("COALESCE(q.last_attempt_us, 0)"),
};

}  // namespace

std::string secrets_database(std::string_view database) {
  const bool plain = !database.empty() && std::all_of(database.begin(), database.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
  if (!plain) {
    throw DatabaseError("db_name '" + std::string(database) +
                        "' is not letters, digits and _ only: it names no secrets database");
  }
  return std::string(database) + "_secrets";
}

AddedSubscription add_subscription(Connection& db, std::string_view database,
                                   const NewSubscription& subscription) {
  const std::string secrets = "INSERT INTO `" + secrets_database(database) +
                              "`.webhook_secrets (subscription_id, secret) VALUES (?, ?)";
  return in_transaction(db, [&] {
    AddedSubscription added;
    db.execute("INSERT INTO webhook_subscriptions (url, statuses) VALUES (?, ?)",
               {subscription.url, subscription.statuses});
    added.id = first_number(db, "SELECT LAST_INSERT_ID()");
    insert_addresses(db, added.id, subscription.addresses);
    added.acked_seq = feed_range(db).second;
    db.execute("INSERT INTO webhook_queues (subscription_id, acked_seq) VALUES (?, ?)",
               {added.id, added.acked_seq});
    db.execute(secrets, {added.id, subscription.secret});
    return added;
  });
}

SubscriptionList list_subscriptions(Connection& db) {
  static const std::string sql = "SELECT " + select_list<SubscriptionState>(kStateColumns) +
                                 " FROM webhook_subscriptions s LEFT JOIN webhook_queues q "
                                 "ON q.subscription_id = s.id ORDER BY s.id";
  return db.run([&](Connection& session) {
    SubscriptionList list;
    list.feed_end = feed_range(session).second;
    list.subscriptions = session.rows<SubscriptionState>(sql, {}, kStateColumns);
    return list;
  });
}

Change set_enabled(Connection& db, std::uint64_t id, bool enabled) {
  return in_transaction(db, [&] {
    auto rs = db.query("SELECT enabled FROM webhook_subscriptions WHERE id = ? FOR UPDATE", {id});
    if (!rs->next()) return Change::kNotFound;
    if (read_value<bool>(*rs, 1) == enabled) return Change::kAlready;
    db.execute("UPDATE webhook_subscriptions SET enabled = ? WHERE id = ?",
               {std::uint64_t{enabled ? 1U : 0U}, id});
    return Change::kDone;
  });
}

Change remove_subscription(Connection& db, std::string_view database, std::uint64_t id) {
  const std::string secrets =
      "DELETE FROM `" + secrets_database(database) + "`.webhook_secrets WHERE subscription_id = ?";
  return in_transaction(db, [&] {
    // Its addresses and queue go with it (ON DELETE CASCADE); the secret has no foreign key.
    if (db.execute("DELETE FROM webhook_subscriptions WHERE id = ?", {id}) == 0) {
      return Change::kNotFound;
    }
    db.execute(secrets, {id});
    return Change::kDone;
  });
}

ReplayRequest request_replay(Connection& db, std::uint64_t id, std::uint64_t since) {
  using Outcome = ReplayRequest::Outcome;
  return in_transaction(db, [&] {
    ReplayRequest request;
    auto rs =
        db.query("SELECT acked_seq FROM webhook_queues WHERE subscription_id = ? FOR UPDATE", {id});
    if (!rs->next()) return request;  // kNotFound
    request.acked_seq = read_value<std::uint64_t>(*rs, 1);
    std::tie(request.feed_start, request.feed_end) = feed_range(db);
    if (request.feed_end == 0) {
      request.outcome = Outcome::kFeedEmpty;
    } else if (since < request.feed_start) {
      request.outcome = Outcome::kBeforeFeed;
    } else if (since > request.feed_end) {
      request.outcome = Outcome::kAfterFeed;
    } else if (since > request.acked_seq + 1) {
      request.outcome = Outcome::kAheadOfCursor;
    } else {
      db.execute(
          "UPDATE webhook_queues SET replay_from_seq = ?, lost_before_seq = 0 "
          "WHERE subscription_id = ?",
          {since, id});
      request.outcome = Outcome::kRequested;
    }
    return request;
  });
}

}  // namespace connector::db
