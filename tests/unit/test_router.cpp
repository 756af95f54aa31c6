#define BOOST_TEST_MODULE test_router
#include <boost/test/unit_test.hpp>

#include <rapidjson/document.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "api/router.h"
#include "config/config.h"
#include "db/connection.h"
#include "db/refreshed_reference.h"
#include "pool/shared_state.h"

using namespace connector;

namespace {

// A response taken apart: the status line, the header fields and a copy of the body (the
// router's body is valid only until its next request).
struct Answer {
  int status = 0;
  std::string request_id;
  std::string head;
  std::string status_line;
  std::vector<std::pair<std::string, std::string>> headers;  // in order
  std::string body;

  int count(const std::string& name) const {
    return static_cast<int>(std::count_if(headers.begin(), headers.end(),
                                          [&](const auto& h) { return h.first == name; }));
  }
  std::string header(const std::string& name) const {
    for (const auto& [key, value] : headers) {
      if (key == name) return value;
    }
    return "<absent>";
  }
};

Answer take_apart(const api::HttpResponse& response) {
  Answer a;
  a.status = response.status;
  a.request_id = response.request_id;
  a.head = response.head;
  a.body = std::string(response.body);
  BOOST_TEST_REQUIRE(a.head.ends_with("\r\n\r\n"));
  std::string_view rest(a.head);
  rest.remove_suffix(2);  // the blank line
  bool first = true;
  while (!rest.empty()) {
    const auto end = rest.find("\r\n");
    BOOST_TEST_REQUIRE(end != std::string_view::npos);
    const std::string_view line = rest.substr(0, end);
    rest.remove_prefix(end + 2);
    if (first) {
      a.status_line = std::string(line);
      first = false;
      continue;
    }
    const auto colon = line.find(": ");
    BOOST_TEST_REQUIRE(colon != std::string_view::npos, "header line without ': ': " << line);
    a.headers.emplace_back(std::string(line.substr(0, colon)), std::string(line.substr(colon + 2)));
  }
  return a;
}

bool is_lower_hex_32(const std::string& text) {
  return text.size() == 32 && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// The names of an object's members, in order.
std::vector<std::string> member_names(const rapidjson::Value& object) {
  std::vector<std::string> names;
  for (const auto& m : object.GetObject()) names.emplace_back(m.name.GetString());
  return names;
}

// The parts of an error body, checked to be exactly {"error":{code, message, [param,]
// request_id}} with string values.
struct ErrorBody {
  std::string code, message, param = "<absent>", request_id;
};

ErrorBody parse_error_body(const std::string& body) {
  rapidjson::Document doc;
  doc.Parse(body.c_str(), body.size());
  BOOST_TEST_REQUIRE(!doc.HasParseError(), "body is not JSON: " << body);
  BOOST_TEST_REQUIRE(doc.IsObject());
  BOOST_TEST_REQUIRE((member_names(doc) == std::vector<std::string>{"error"}));
  const rapidjson::Value& error = doc["error"];
  BOOST_TEST_REQUIRE(error.IsObject());
  const auto names = member_names(error);
  const bool with_param = error.HasMember("param");
  const std::vector<std::string> expected =
      with_param ? std::vector<std::string>{"code", "message", "param", "request_id"}
                 : std::vector<std::string>{"code", "message", "request_id"};
  BOOST_TEST_REQUIRE(names == expected, boost::test_tools::per_element());
  for (const auto& m : error.GetObject()) BOOST_TEST_REQUIRE(m.value.IsString());
  ErrorBody out;
  out.code = error["code"].GetString();
  out.message = error["message"].GetString();
  if (with_param) out.param = error["param"].GetString();
  out.request_id = error["request_id"].GetString();
  return out;
}

// A router over a database that is never reached by the requests these tests send (the
// Connection constructor does not connect).
struct RouterFixture {
  db::Connection connection{db::read_targets({}), db::connection_options({})};
  db::MariaDbHistoryReader history{connection};
  db::NewRowBudget new_rows{0, db::new_row_window()};
  db::MariaDbDepositAccounts accounts{connection, connection, new_rows};
  db::MariaDbReadinessCheck readiness{connection};
  db::RefreshedReference reference{std::chrono::milliseconds(1000)};
  db::RefreshedSupply supply{std::chrono::milliseconds(1000)};
  pool::SharedState state;
  api::Router router{{history, accounts, readiness, reference, supply, state}};

  Answer get(std::string_view path, std::string_view query = {}, std::string_view id = "rid-1",
             std::string_view method = "GET", std::string_view if_none_match = {}) {
    return take_apart(router.handle({method, path, query, if_none_match, id}));
  }
};

const std::string kLongQuery = "page_id=" + std::string(4097 - 8, '0');

}  // namespace

BOOST_FIXTURE_TEST_SUITE(router_without_database, RouterFixture)

BOOST_AUTO_TEST_CASE(unknown_path_is_404_not_found_without_repeating_the_path) {
  for (const std::string path :
       {"/v1/nope", "/", "", "/v1/networks/", "/V1/networks", "/v1/history/hash/x", "/v2/networks",
        "/v1/\"quoted\"\\back-slash</script>"}) {
    BOOST_TEST_CONTEXT("path '" << path << "'") {
      const Answer a = get(path);
      BOOST_TEST(a.status == 404);
      BOOST_TEST(a.status_line == "Status: 404 Not Found");
      const ErrorBody e = parse_error_body(a.body);
      BOOST_TEST(e.code == "not_found");
      BOOST_TEST(e.message == "No such endpoint");
      BOOST_TEST(e.param == "<absent>");
      BOOST_TEST(e.request_id == "rid-1");
    }
  }
}

BOOST_AUTO_TEST_CASE(unknown_path_that_is_long_or_not_utf8_is_not_echoed_either) {
  for (const std::string& path : {"/" + std::string(300, 'a'), std::string("/v1/\xff\xfe"),
                                  std::string("/v1/tab\there"), std::string("/v1/del\x7f")}) {
    BOOST_TEST_CONTEXT(path.size() << " bytes") {
      const Answer a = get(path);
      BOOST_TEST(a.status == 404);
      const ErrorBody e = parse_error_body(a.body);
      BOOST_TEST(e.code == "not_found");
      BOOST_TEST(e.message == "No such endpoint");
    }
  }
}

BOOST_AUTO_TEST_CASE(error_head_has_the_shared_headers) {
  const Answer a = get("/v1/nope", "", "abc123");
  BOOST_TEST(a.head.starts_with("Status: 404 Not Found\r\n"));
  BOOST_TEST(a.header("Content-Type") == "application/json; charset=utf-8");
  BOOST_TEST(a.header("Cache-Control") == "no-store");
  BOOST_TEST(a.header("X-Request-Id") == "abc123");
  BOOST_TEST(a.request_id == "abc123");
  BOOST_TEST(a.header("Content-Length") == std::to_string(a.body.size()));
  BOOST_TEST(a.count("ETag") == 0);  // only a 200 has one
  BOOST_TEST(a.count("Allow") == 0);
  BOOST_TEST(a.count("Retry-After") == 0);
  for (const char* name : {"Content-Type", "Cache-Control", "X-Request-Id", "Content-Length"}) {
    BOOST_TEST_CONTEXT(name) { BOOST_TEST(a.count(name) == 1); }
  }
  BOOST_TEST(parse_error_body(a.body).request_id == "abc123");
}

BOOST_AUTO_TEST_CASE(a_valid_request_id_is_echoed) {
  const std::string nginx_id = "0123456789abcdef0123456789abcdef";
  for (const std::string& id : {nginx_id, std::string("Req-42"), std::string(64, 'Z')}) {
    BOOST_TEST_CONTEXT("id '" << id << "'") {
      const Answer a = get("/v1/nope", "", id);
      BOOST_TEST(a.request_id == id);
      BOOST_TEST(a.header("X-Request-Id") == id);
      BOOST_TEST(parse_error_body(a.body).request_id == id);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_missing_or_malformed_request_id_is_replaced) {
  for (const std::string& id :
       {std::string(), std::string("has spaces in it"), std::string(100, 'a'),
        std::string("id\r\nSet-Cookie: x=1"), std::string("a_b"), std::string("caf\xC3\xA9")}) {
    BOOST_TEST_CONTEXT("id '" << id << "'") {
      const Answer a = get("/v1/nope", "", id);
      BOOST_TEST(is_lower_hex_32(a.request_id));
      BOOST_TEST(a.header("X-Request-Id") == a.request_id);
      BOOST_TEST(parse_error_body(a.body).request_id == a.request_id);
      BOOST_TEST(a.head.find("Set-Cookie") == std::string::npos);
    }
  }
  // A fresh one each time.
  BOOST_TEST(get("/v1/nope", "", "").request_id != get("/v1/nope", "", "").request_id);
}

BOOST_AUTO_TEST_CASE(other_methods_on_a_known_path_are_405_with_allow) {
  for (const std::string method : {"POST", "PUT", "DELETE", "PATCH", "OPTIONS", "get", ""}) {
    BOOST_TEST_CONTEXT("method '" << method << "'") {
      const Answer a = get("/v1/history", "", "rid-2", method);
      BOOST_TEST(a.status == 405);
      BOOST_TEST(a.status_line == "Status: 405 Method Not Allowed");
      BOOST_TEST(a.header("Allow") == "GET, HEAD, OPTIONS");
      BOOST_TEST(a.count("Allow") == 1);
      BOOST_TEST(a.header("Cache-Control") == "no-store");
      const ErrorBody e = parse_error_body(a.body);
      BOOST_TEST(e.code == "method_not_allowed");
      BOOST_TEST(e.param == "<absent>");
      BOOST_TEST(e.request_id == "rid-2");
    }
  }
}

BOOST_AUTO_TEST_CASE(post_on_an_unknown_path_is_404) {
  const Answer a = get("/v1/nope", "", "rid", "POST");
  BOOST_TEST(a.status == 404);
  BOOST_TEST(a.count("Allow") == 0);
}

BOOST_AUTO_TEST_CASE(a_query_of_4097_bytes_is_414) {
  BOOST_REQUIRE(kLongQuery.size() == 4097u);
  for (const char* path : {"/v1/history", "/v1/networks", "/v1/account"}) {
    BOOST_TEST_CONTEXT(path) {
      const Answer a = get(path, kLongQuery);
      BOOST_TEST(a.status == 414);
      BOOST_TEST(a.status_line == "Status: 414 URI Too Long");
      const ErrorBody e = parse_error_body(a.body);
      BOOST_TEST(e.code == "query_too_long");
      BOOST_TEST(e.param == "<absent>");
    }
  }
}

BOOST_AUTO_TEST_CASE(an_invalid_escape_is_400_naming_the_param_the_endpoint_knows) {
  const Answer a = get("/v1/history", "page_id=%zz");
  BOOST_TEST(a.status == 400);
  BOOST_TEST(a.status_line == "Status: 400 Bad Request");
  const ErrorBody e = parse_error_body(a.body);
  BOOST_TEST(e.code == "invalid_parameter");
  BOOST_TEST(e.param == "page_id");
}

BOOST_AUTO_TEST_CASE(a_parameter_the_endpoint_does_not_know_is_never_named) {
  // networks knows no parameter: these are ignored, however malformed, and the request goes on
  // (to a 503 here: this fixture has no reference data loaded).
  for (const char* query : {"page_id=%zz", "%E2%80%AESEND%20TO%200xdead=%ZZ", "%zz", "a=1&a=2"}) {
    BOOST_TEST_CONTEXT(query) {
      const Answer a = get("/v1/networks", query);
      BOOST_TEST(a.status == 503);
      BOOST_TEST(parse_error_body(a.body).param == "<absent>");
      BOOST_TEST(a.body.find("SEND") == std::string::npos);
    }
  }
}

BOOST_AUTO_TEST_CASE(invalid_utf8_and_nul_are_400) {
  for (const char* query : {"status=%ff", "status=%00", "status=%c0%af", "status=%ed%a0%80"}) {
    BOOST_TEST_CONTEXT(query) {
      const Answer a = get("/v1/history", query);
      BOOST_TEST(a.status == 400);
      BOOST_TEST(parse_error_body(a.body).param == "status");
    }
  }
}

BOOST_AUTO_TEST_CASE(a_known_param_given_twice_is_400_duplicate_parameter) {
  const struct {
    std::string path, query, param;
  } cases[] = {
      {"/v1/history", "status=a&status=b", "status"},
      {"/v1/history", "status=&status=", "status"},
      {"/v1/history", "_=1&page_size=1&page_size=1", "page_size"},
      {"/v1/history/hash", "hash=a&hash=b", "hash"},
      {"/v1/account", "recipient_address=a&recipient_address=b", "recipient_address"},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT(c.path << "?" << c.query) {
      const Answer a = get(c.path, c.query, "dup-1");
      BOOST_TEST(a.status == 400);
      const ErrorBody e = parse_error_body(a.body);
      BOOST_TEST(e.code == "duplicate_parameter");
      BOOST_TEST(e.param == c.param);
      BOOST_TEST(e.request_id == "dup-1");
    }
  }
}

BOOST_AUTO_TEST_CASE(head_has_no_body_but_the_length_of_the_get_body) {
  const struct {
    std::string path, query;
    int status;
  } cases[] = {
      {"/v1/nope", "", 404},
      {"/v1/history", "page_id=%zz", 400},
      {"/v1/history", "status=a&status=b", 400},
      {"/v1/networks", kLongQuery, 414},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT(c.path << " " << c.status) {
      const Answer as_get = get(c.path, c.query, "same-id", "GET");
      const Answer as_head = get(c.path, c.query, "same-id", "HEAD");
      BOOST_TEST(as_get.status == c.status);
      BOOST_TEST(as_head.status == c.status);
      BOOST_TEST(!as_get.body.empty());
      BOOST_TEST(as_head.body == "");
      BOOST_TEST(as_head.header("Content-Length") == std::to_string(as_get.body.size()));
      BOOST_TEST(as_head.head == as_get.head);
    }
  }
}

BOOST_AUTO_TEST_CASE(if_none_match_never_turns_an_error_into_304) {
  const Answer a = get("/v1/nope", "", "rid", "GET", "*");
  BOOST_TEST(a.status == 404);
  BOOST_TEST(!a.body.empty());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_CASE(history_without_a_database_server_is_503_with_retry_after) {
  config::DatabaseSettings settings;
  settings.socket = "/nonexistent/x.sock";
  settings.connect_timeout_s = 1;
  settings.read_timeout_s = 1;
  db::Connection connection(db::read_targets(settings), db::connection_options(settings));
  db::MariaDbHistoryReader history(connection);
  db::NewRowBudget new_rows(0, db::new_row_window());
  db::MariaDbDepositAccounts accounts(connection, connection, new_rows);
  db::MariaDbReadinessCheck readiness(connection);
  db::RefreshedReference reference(std::chrono::milliseconds(1000));
  db::RefreshedSupply supply(std::chrono::milliseconds(1000));
  const pool::SharedState state;
  api::Router router({history, accounts, readiness, reference, supply, state});

  const auto started = std::chrono::steady_clock::now();
  const Answer a = take_apart(router.handle({"GET", "/v1/history", "page_id=0", {}, "db-down-1"}));
  const auto elapsed = std::chrono::steady_clock::now() - started;

  BOOST_TEST(a.status == 503);
  BOOST_TEST(a.status_line == "Status: 503 Service Unavailable");
  BOOST_TEST(a.header("Retry-After") == "1");
  BOOST_TEST(a.header("Cache-Control") == "no-store");
  BOOST_TEST(a.header("X-Request-Id") == "db-down-1");
  BOOST_TEST(a.count("ETag") == 0);
  const ErrorBody e = parse_error_body(a.body);
  BOOST_TEST(e.code == "unavailable");
  BOOST_TEST(e.param == "<absent>");
  BOOST_TEST(e.request_id == "db-down-1");
  // Never a host name, socket path or driver text.
  BOOST_TEST(a.body.find("nonexistent") == std::string::npos);
  BOOST_TEST(a.body.find("sock") == std::string::npos);
  BOOST_TEST(std::chrono::duration<double>(elapsed).count() < 3.0);

  // Right after a failed connect the next request fails fast too, still as a 503.
  const Answer again = take_apart(router.handle({"HEAD", "/v1/history", "", {}, "db-down-2"}));
  BOOST_TEST(again.status == 503);
  BOOST_TEST(again.header("Retry-After") == "1");
  BOOST_TEST(again.body == "");
}
