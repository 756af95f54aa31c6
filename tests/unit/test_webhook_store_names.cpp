// The database the webhook secrets live in (db/webhook_subscriptions.h): `<db_name>_secrets`,
// written into the deliverer's statement, so only a plain identifier is taken.
#define BOOST_TEST_MODULE webhook_store_names
#include <boost/test/unit_test.hpp>
#include <string>

#include "db/connection.h"
#include "db/webhook_subscriptions.h"

using connector::db::DatabaseError;
using connector::db::secrets_database;

namespace {

std::string refusal(const std::string& name) {
  try {
    return "taken as " + secrets_database(name);
  } catch (const DatabaseError& e) {
    return e.what();
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_secrets_database_is_the_database_and_secrets) {
  BOOST_TEST(secrets_database("connector") == "connector_secrets");
  BOOST_TEST(secrets_database("Unit_Connector_2") == "Unit_Connector_2_secrets");
  BOOST_TEST(secrets_database("_") == "__secrets");
}

BOOST_AUTO_TEST_CASE(a_name_that_is_not_a_plain_identifier_is_refused) {
  const auto refused = [](const std::string& name) {
    return "db_name '" + name + "' is not letters, digits and _ only: it names no secrets database";
  };
  BOOST_TEST(refusal("") == refused(""));
  BOOST_TEST(refusal("a-b") == refused("a-b"));
  BOOST_TEST(refusal("a`b") == refused("a`b"));
  BOOST_TEST(refusal("a b") == refused("a b"));
  BOOST_TEST(refusal("a.b") == refused("a.b"));
  BOOST_TEST(refusal("conn\xC3\xA9") == refused("conn\xC3\xA9"));  // é, not ASCII
  BOOST_CHECK_THROW(secrets_database(std::string("a\0b", 3)), DatabaseError);
}
