#pragma once
// The narrow interfaces the endpoints use to read history, record deposit accounts and check
// readiness, so every endpoint can be tested against an in-memory fake (tests/unit/
// endpoint_fakes.h) as well as against MariaDB (tests/integration/). The MariaDB versions
// below are thin: the statements live in history_reads, deposit_account_writes.
#include <cstdint>
#include <optional>
#include <string>

#include "db/change_feed.h"
#include "db/connection.h"
#include "db/deposit_account_writes.h"
#include "db/history_reads.h"
#include "domain/history.h"

namespace connector::db {

class HistoryReader {
 public:
  virtual ~HistoryReader() = default;
  virtual HistoryPage find_page(const HistoryFilter& filter, std::uint64_t page_id,
                                std::uint32_t page_size, domain::SortOrder order) = 0;
  virtual std::optional<domain::HistoryRecord> find_by_hash(const std::string& hash) = 0;
  // The changes with after < seq <= upto of a record, or of an address's records
  // (db/change_feed.h).
  virtual std::vector<FeedChange> record_changes(std::uint64_t history_id, std::uint64_t after,
                                                 std::uint64_t upto, std::uint32_t limit) = 0;
  virtual std::vector<FeedChange> address_changes(std::string_view address, std::uint64_t after,
                                                  std::uint64_t upto, std::uint32_t limit) = 0;
  // The newest seq the feed holds here; a record as it is with its newest change's seq.
  virtual std::uint64_t feed_end() = 0;
  virtual std::optional<RecordState> record_state(std::uint64_t history_id) = 0;
};

class DepositAccounts {
 public:
  virtual ~DepositAccounts() = default;
  // Returns once the mapping is proven recorded; throws DatabaseUnavailable otherwise.
  virtual void record(const DepositAccount& account) = 0;
};

class ReadinessCheck {
 public:
  virtual ~ReadinessCheck() = default;
  // Returns when the database answers; throws DatabaseUnavailable otherwise.
  virtual void check() = 0;
};

class MariaDbHistoryReader final : public HistoryReader {
 public:
  explicit MariaDbHistoryReader(Connection& db) : db_(db) {}
  HistoryPage find_page(const HistoryFilter& filter, std::uint64_t page_id, std::uint32_t page_size,
                        domain::SortOrder order) override {
    return find_history_page(db_, filter, page_id, page_size, order);
  }
  std::optional<domain::HistoryRecord> find_by_hash(const std::string& hash) override {
    return find_history_by_hash(db_, hash);
  }
  std::vector<FeedChange> record_changes(std::uint64_t history_id, std::uint64_t after,
                                         std::uint64_t upto, std::uint32_t limit) override {
    return record_changes_between(db_, history_id, after, upto, limit);
  }
  std::vector<FeedChange> address_changes(std::string_view address, std::uint64_t after,
                                          std::uint64_t upto, std::uint32_t limit) override {
    return address_changes_between(db_, address, after, upto, limit);
  }
  std::uint64_t feed_end() override { return db::feed_end(db_); }
  std::optional<RecordState> record_state(std::uint64_t history_id) override {
    return find_record_state(db_, history_id);
  }

 private:
  Connection& db_;
};

class MariaDbDepositAccounts final : public DepositAccounts {
 public:
  MariaDbDepositAccounts(Connection& reader, Connection& writer, NewRowBudget& budget)
      : reader_(reader), writer_(writer), budget_(budget) {}
  // Throws NewRowCapReached past the cap, DatabaseUnavailable on any other failure.
  void record(const DepositAccount& account) override {
    try {
      record_deposit_account(reader_, writer_, budget_, account);
    } catch (const DatabaseError& e) {  // any failure to record it is a 503, whatever the cause
      throw DatabaseUnavailable(std::string("deposit address not recorded: ") + e.what());
    }
  }

 private:
  Connection& reader_;
  Connection& writer_;
  NewRowBudget& budget_;
};

class MariaDbReadinessCheck final : public ReadinessCheck {
 public:
  explicit MariaDbReadinessCheck(Connection& db) : db_(db) {}
  void check() override {
    db_.run([](Connection& session) { return session.query(statement())->next(); });
  }
  // The statement it runs (db/statement_set.h).
  static const std::string& statement() {
    static const std::string sql = "SELECT 1";
    return sql;
  }

 private:
  Connection& db_;
};

}  // namespace connector::db
