#pragma once
// A connection's prepared statements by SQL text, at most `capacity` of them: when it is full,
// the least recently used one is closed (destroyed) to make room for a new one. One statement
// at a time is "in use", from use() until finished(): the one a failure drops (drop_in_use()).
// Templated on the statement type so the bookkeeping is tested without a server; the
// connection holds StatementCache<sql::PreparedStatement>.
#include <cstddef>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>

namespace connector::db {

template <typename Statement>
class StatementCache {
 public:
  explicit StatementCache(std::size_t capacity) : capacity_(capacity) {}
  StatementCache(const StatementCache&) = delete;
  StatementCache& operator=(const StatementCache&) = delete;

  // The statement for sql_text, now the most recently used and in use: the cached one, or
  // prepare(sql_text) (a std::unique_ptr<Statement>) after closing the least recently used one
  // when the cache is full. A prepare that throws leaves nothing in use.
  template <typename Prepare>
  Statement& use(const std::string& sql_text, Prepare&& prepare) {
    in_use_ = nullptr;
    if (auto found = by_text_.find(sql_text); found != by_text_.end()) {
      recency_.splice(recency_.begin(), recency_, found->second.recency);
      in_use_ = &*found->second.recency;
      return *found->second.statement;
    }
    if (by_text_.size() >= capacity_) {
      by_text_.erase(recency_.back());  // closes it
      recency_.pop_back();
    }
    std::unique_ptr<Statement> prepared = prepare(sql_text);
    recency_.push_front(sql_text);
    try {
      auto& slot = by_text_[sql_text];
      slot = {std::move(prepared), recency_.begin()};
      in_use_ = &recency_.front();
      return *slot.statement;
    } catch (...) {
      recency_.pop_front();
      throw;
    }
  }

  // The statement in use ran: nothing is in use.
  void finished() noexcept { in_use_ = nullptr; }

  // Closes the statement in use, if any (it failed).
  void drop_in_use() noexcept {
    if (in_use_ == nullptr) return;
    const auto found = by_text_.find(*in_use_);
    in_use_ = nullptr;
    if (found == by_text_.end()) return;
    recency_.erase(found->second.recency);
    by_text_.erase(found);
  }

  // Closes every statement (before their connection goes).
  void clear() noexcept {
    in_use_ = nullptr;
    by_text_.clear();
    recency_.clear();
  }

  std::size_t size() const { return by_text_.size(); }
  bool contains(const std::string& sql_text) const { return by_text_.count(sql_text) != 0; }
  // The cached texts, most recently used first.
  const std::list<std::string>& by_recency() const { return recency_; }

 private:
  struct Entry {
    std::unique_ptr<Statement> statement;
    std::list<std::string>::iterator recency;
  };

  std::size_t capacity_;
  std::unordered_map<std::string, Entry> by_text_;
  std::list<std::string> recency_;       // most recently used first
  const std::string* in_use_ = nullptr;  // its text, in recency_
};

}  // namespace connector::db
