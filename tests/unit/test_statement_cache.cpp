// A connection's prepared statements (db::StatementCache): prepared once per text, the least
// recently used one closed when full, the one in use dropped after a failure.
#define BOOST_TEST_MODULE statement_cache
#include <boost/test/unit_test.hpp>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "db/statement_cache.h"

using connector::db::StatementCache;

namespace {

// A statement that notes its closing (its destruction) in a shared log.
struct FakeStatement {
  FakeStatement(std::string text, std::vector<std::string>* closed)
      : text(std::move(text)), closed(closed) {}
  FakeStatement(const FakeStatement&) = delete;
  FakeStatement& operator=(const FakeStatement&) = delete;
  ~FakeStatement() { closed->push_back(text); }
  std::string text;
  std::vector<std::string>* closed;
};

struct Fixture {
  std::vector<std::string> prepared;
  std::vector<std::string> closed;
  StatementCache<FakeStatement> cache{3};

  FakeStatement& use(const std::string& text) {
    return cache.use(text, [this](const std::string& sql) {
      prepared.push_back(sql);
      return std::make_unique<FakeStatement>(sql, &closed);
    });
  }
  std::vector<std::string> recency() const {
    return {cache.by_recency().begin(), cache.by_recency().end()};
  }
};

using Texts = std::vector<std::string>;

}  // namespace

BOOST_FIXTURE_TEST_CASE(a_text_is_prepared_once, Fixture) {
  FakeStatement& first = use("SELECT 1");
  FakeStatement& again = use("SELECT 1");
  BOOST_TEST(&first == &again);
  BOOST_TEST(first.text == "SELECT 1");
  BOOST_TEST(prepared == Texts{"SELECT 1"}, boost::test_tools::per_element());
  BOOST_TEST(cache.size() == 1u);
  BOOST_TEST(closed.empty());
}

BOOST_FIXTURE_TEST_CASE(full_closes_the_least_recently_used, Fixture) {
  use("a");
  use("b");
  use("c");
  use("a");  // now b is the least recently used
  BOOST_TEST(recency() == (Texts{"a", "c", "b"}), boost::test_tools::per_element());
  use("d");
  BOOST_TEST(closed == Texts{"b"}, boost::test_tools::per_element());
  BOOST_TEST(recency() == (Texts{"d", "a", "c"}), boost::test_tools::per_element());
  BOOST_TEST(cache.size() == 3u);
  BOOST_TEST(!cache.contains("b"));
  use("b");  // prepared again, c goes
  BOOST_TEST(closed == (Texts{"b", "c"}), boost::test_tools::per_element());
  BOOST_TEST(prepared == (Texts{"a", "b", "c", "d", "b"}), boost::test_tools::per_element());
}

BOOST_FIXTURE_TEST_CASE(never_more_than_the_capacity, Fixture) {
  for (int i = 0; i < 100; ++i) {
    use("s" + std::to_string(i % 7));
    BOOST_TEST(cache.size() <= 3u);
  }
  BOOST_TEST(cache.size() == 3u);
  BOOST_TEST(closed.size() == 97u);  // every use missed: 7 texts in turn, room for 3
}

BOOST_FIXTURE_TEST_CASE(drop_in_use_closes_the_statement_last_used, Fixture) {
  use("a");
  use("b");
  cache.drop_in_use();
  BOOST_TEST(closed == Texts{"b"}, boost::test_tools::per_element());
  BOOST_TEST(recency() == Texts{"a"}, boost::test_tools::per_element());
  cache.drop_in_use();  // nothing in use any more
  BOOST_TEST(closed == Texts{"b"}, boost::test_tools::per_element());
}

BOOST_FIXTURE_TEST_CASE(a_cached_statement_is_in_use_again, Fixture) {
  use("a");
  use("b");
  use("a");
  cache.drop_in_use();
  BOOST_TEST(closed == Texts{"a"}, boost::test_tools::per_element());
  BOOST_TEST(recency() == Texts{"b"}, boost::test_tools::per_element());
}

BOOST_FIXTURE_TEST_CASE(finished_leaves_nothing_to_drop, Fixture) {
  use("a");
  cache.finished();
  cache.drop_in_use();
  BOOST_TEST(closed.empty());
  BOOST_TEST(cache.contains("a"));
}

BOOST_FIXTURE_TEST_CASE(a_failed_prepare_leaves_nothing_in_use, Fixture) {
  use("a");
  BOOST_CHECK_THROW(cache.use("bad",
                              [](const std::string&) -> std::unique_ptr<FakeStatement> {
                                throw std::runtime_error("syntax");
                              }),
                    std::runtime_error);
  cache.drop_in_use();
  BOOST_TEST(closed.empty());
  BOOST_TEST(recency() == Texts{"a"}, boost::test_tools::per_element());
}

BOOST_FIXTURE_TEST_CASE(clear_closes_everything, Fixture) {
  use("a");
  use("b");
  cache.clear();
  BOOST_TEST(cache.size() == 0u);
  BOOST_TEST(closed.size() == 2u);
  BOOST_TEST(cache.by_recency().empty());
  cache.drop_in_use();
  BOOST_TEST(closed.size() == 2u);
}
