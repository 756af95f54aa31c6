#include "config/keys.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "util/text.h"

namespace connector::config {
namespace {

using W = WorkerSettings;
using D = DatabaseSettings;
using H = WebhookSettings;

constexpr std::string_view kSocket = "FastCGI socket";
constexpr std::string_view kPool = "Processes and requests";
constexpr std::string_view kDatabase = "MariaDB";
constexpr std::string_view kEvents = "Server-sent events";
constexpr std::string_view kWebhooks = "Webhooks (connector-webhooks)";

// The table. Defaults are the fields' initial values in config.h.
const Key kKeys[] = {
    {.name = "listen",
     .field = &W::listen,
     .group = kSocket,
     .reload = "restart",
     .brief = "FastCGI socket: a unix socket path, or `host:port`. Under systemd the socket unit "
              "(connector-worker.socket) owns it and this key and the next two are unused",
     .detail = "FastCGI socket (unix path or `host:port`) when not socket-activated; with "
               "systemd the socket unit owns it"},
    {.name = "listen_mode",
     .field = &W::listen_mode,
     .max = 0777,
     .base = 8,
     .group = kSocket,
     .reload = "restart",
     .brief = "octal mode of a unix socket the worker creates itself (nginx's user must be able "
              "to connect)"},
    {.name = "listen_backlog",
     .field = &W::listen_backlog,
     .min = 1,
     .max = 65535,
     .group = kSocket,
     .reload = "restart",
     .brief = "accept queue of a socket the worker creates itself"},
    {.name = "fcgi_read_timeout_ms",
     .field = &W::fcgi_read_timeout_ms,
     .min = 100,
     .max = 600000,
     .group = kSocket,
     .reload = "yes",
     .brief = "a FastCGI connection must deliver its whole request within this time, a "
              "connection nginx keeps open may stay idle this long, and a whole answer may take "
              "this long to write; past it the worker closes the connection. Applies under "
              "systemd too",
     .detail = "the time a FastCGI connection has to deliver its whole request "
               "(FCGI_BEGIN_REQUEST to the empty FCGI_STDIN record that ends it), the time a "
               "connection nginx "
               "keeps open (`fastcgi_keep_conn`) may stay idle (keep the upstream's "
               "`keepalive_timeout` below it), and the time a whole answer may take to write; past "
               "it the worker closes the connection. A request not whole yet waits without a "
               "thread (fcgi/pending_requests.h). nginx sends a "
               "request at once, so only a broken or hostile peer ever meets it; applies under "
               "systemd too"},
    {.name = "listen_allow_any",
     .field = &W::listen_allow_any,
     .group = kSocket,
     .reload = "restart",
     .brief = "on a TCP socket, `yes` lets any host that reaches the port send requests; "
              "otherwise the worker refuses to start on TCP unless FCGI_WEB_SERVER_ADDRS lists "
              "nginx's addresses. Only for a network that no one else can reach"},
    {.name = "fcgi_max_params_bytes",
     .field = &W::fcgi_max_params_bytes,
     .min = 1024,
     .max = 65536,
     .group = kSocket,
     .reload = "yes",
     .brief = "the most bytes of FastCGI parameters one request may carry; a request with more, "
              "or one that is not well formed, is closed before libfcgi reads it, counted in "
              "`connector_fcgi_rejected_total`. nginx sends 1-2 KiB, and with the shipped "
              "drop-ins at most about 50 KiB (the URL twice and every header): keep it above "
              "that, or nginx answers such a request 503 instead of the worker's 4xx. At most "
              "64 KiB: nginx sends no PARAMS record larger"},
    {.name = "processes",
     .field = &W::processes,
     .min = 1,
     .max = 64,
     .group = kPool,
     .reload = "yes",
     .brief = "worker processes"},
    {.name = "threads",
     .field = &W::threads,
     .min = 1,
     .max = 1024,
     .group = kPool,
     .reload = "yes",
     .brief = "threads per process; each holds one read and (when used) one write database "
              "connection"},
    {.name = "max_requests",
     .field = &W::max_requests,
     .max = 4000000000U,
     .group = kPool,
     .reload = "yes",
     .brief = "a process is replaced after serving this many requests (0: never); while it "
              "drains it still answers the requests nginx sends on its kept connections, so a "
              "few more"},
    {.name = "request_timeout_ms",
     .field = &W::request_timeout_ms,
     .min = 100,
     .max = 600000,
     .group = kPool,
     .reload = "yes",
     .brief = "time budget of one request, shared by all its database work; past it the "
              "request is a 503",
     .detail = "time budget of one request, shared by all its database work (connect, every "
               "statement, a retry): enforced by MariaDB (`max_statement_time` cut to what is "
               "left, lock waits) and, against a hung server, by the client's read timeout, "
               "which counts whole seconds: one statement may run for the budget rounded down "
               "to whole seconds less 200 ms, so prefer whole seconds (1500 lets a statement "
               "run 800 ms); past it the request is a 503 and the thread is free again"},
    {.name = "slow_request_ms",
     .field = &W::slow_request_ms,
     .max = 600000,
     .group = kPool,
     .reload = "yes",
     .brief = "requests at least this slow are logged as a `slow request:` line"},
    {.name = "access_log",
     .field = &W::access_log,
     .group = kPool,
     .reload = "yes (the file is reopened)",
     .brief = "`stderr` (journald), a file path, or `off`; health and monitoring probes "
              "(`/healthz`, `/readyz`, `/metrics`, `/status`) are logged only when they fail "
              "(5xx) or are slow"},
    {.name = "shutdown_timeout_s",
     .field = &W::shutdown_timeout_s,
     .min = 1,
     .max = 3600,
     .group = kPool,
     .reload = "yes",
     .brief = "how long SIGTERM waits for requests in flight before killing (keep it below the "
              "unit's TimeoutStopSec)"},
    {.name = "reference_refresh_ms",
     .field = &W::reference_refresh_ms,
     .max = 3600000,
     .group = kPool,
     .reload = "yes",
     .brief = "chains, assets, connects and pairs, and the chains' status and supply "
              "(`/v1/ab`), are served from memory and reloaded this often (±10 %, 0: every "
              "50 ms) by one background thread per process, never by a request; while the "
              "database is away `/v1/ab` answers 503 once its copy is twice this old (at least "
              "1 s)"},
    {.name = "new_accounts_per_minute",
     .field = &W::new_accounts_per_minute,
     .max = 1000000,
     .group = kPool,
     .reload = "yes",
     .brief = "new deposit addresses (`/v1/account`) recorded per minute by all the "
              "worker's processes on this host together; past it, a request that needs a new "
              "row is a 503 `unavailable` with `Retry-After` (seconds to the next minute), while "
              "addresses already recorded are still answered; 0: no cap (docs/security.md)",
     .detail = "new deposit addresses (`/v1/account`) recorded per minute by all the "
               "worker's processes on this host together; past it, a request that needs a new "
               "row is a 503 `unavailable` with `Retry-After` (seconds to the next minute), "
               "while addresses already recorded are still answered; 0: no cap. "
               "`connector_deposit_accounts_created_total` and "
               "`connector_deposit_accounts_refused_total` in `/metrics` count both outcomes "
               "(docs/security.md)"},
    {.name = "events_publisher",
     .field = &W::events_publisher,
     .group = kEvents,
     .example = "/run/connector-events-publish/publish.sock",
     .reload = "restart",
     .brief =
         "the events nginx's publisher socket (nginx/connector-events-nginx.conf): one "
         "process of the pool publishes each change of history there, and the event streams and "
         "long-polls of /v1/history and /v1/history/hash are served; empty: no events "
         "(those paths answer 404)"},
    {.name = "events_poll_ms",
     .field = &W::events_poll_ms,
     .min = 20,
     .max = 10000,
     .group = kEvents,
     .reload = "restart",
     .brief = "how often the publisher reads the change feed (history_changes) from the read "
              "server: the most an event waits before it is published"},
    {.name = "events_gap_wait_ms",
     .field = &W::events_gap_wait_ms,
     .min = 0,
     .max = 600000,
     .group = kEvents,
     .reload = "restart",
     .brief = "how long the publisher waits for a hole in the feed to fill (a change whose "
              "transaction has not committed yet) before it passes over it and publishes what "
              "follows; longer writer transactions lose their events past it"},
    {.name = "events_cursor_file",
     .field = &W::events_cursor_file,
     .group = kEvents,
     .example = "/var/lib/connector/events-cursor",
     .reload = "restart",
     .brief = "file where the publisher keeps the last change it published, so that a restart "
              "of the service resumes there; empty: kept in memory only (a restart then starts "
              "at the feed's end)"},
    {.name = "db_socket",
     .field = &D::socket,
     .group = kDatabase,
     .example = "/run/mysqld/mysqld.sock",
     .reload = "yes",
     .brief = "the primary's unix socket; when set, `db_host` and `db_port` are unused"},
    {.name = "db_host",
     .field = &D::host,
     .group = kDatabase,
     .reload = "yes",
     .brief = "the primary's host"},
    {.name = "db_port",
     .field = &D::port,
     .min = 1,
     .max = 65535,
     .group = kDatabase,
     .reload = "yes",
     .brief = "the primary's port"},
    {.name = "db_replicas",
     .field = &D::replicas,
     .group = kDatabase,
     .example = "10.0.0.12:3306,10.0.0.13:3306",
     .reload = "yes",
     .brief = "read replicas in preference order, tried before the primary: `unix:/path` or "
              "`host:port`, comma-separated; at most 15"},
    {.name = "db_name",
     .field = &D::name,
     .group = kDatabase,
     .reload = "yes",
     .brief = "database"},
    {.name = "db_user",
     .field = &D::user,
     .group = kDatabase,
     .reload = "yes",
     .brief = "the read account (`connector_reader` in production: SELECT only)"},
    {.name = "db_password",
     .field = &D::password,
     .secret = true,
     .group = kDatabase,
     .reload = "yes",
     .brief = "its password; prefer `CONNECTOR_DB_PASSWORD` in the environment file"},
    {.name = "db_write_user",
     .field = &D::write_user,
     .group = kDatabase,
     .reload = "yes",
     .brief = "the account of the one write, the deposit-address record (`connector_writer`: "
              "SELECT, INSERT on deposit_accounts only); empty: `db_user`"},
    {.name = "db_write_password",
     .field = &D::write_password,
     .secret = true,
     .group = kDatabase,
     .reload = "yes",
     .brief = "its password (empty with an empty `db_write_user`: `db_password`); prefer "
              "`CONNECTOR_DB_WRITE_PASSWORD`"},
    {.name = "db_connect_timeout_s",
     .field = &D::connect_timeout_s,
     .min = 1,
     .max = 600,
     .group = kDatabase,
     .reload = "yes",
     .brief = "connect timeout per server"},
    {.name = "db_read_timeout_s",
     .field = &D::read_timeout_s,
     .min = 1,
     .max = 3600,
     .group = kDatabase,
     .reload = "yes",
     .brief = "client-side network read/write timeout (request connections use at most "
              "`request_timeout_ms` in whole seconds, rounded down)"},
    {.name = "db_failback_s",
     .field = &D::failback_s,
     .min = 1,
     .max = 86400,
     .group = kDatabase,
     .reload = "yes",
     .brief = "how long reads stay on a fallback server (a later replica or the primary) before "
              "trying the preferred one again"},
    {.name = "db_replica_max_lag_s",
     .field = &D::replica_max_lag_s,
     .min = 0,
     .max = 86400,
     .group = kDatabase,
     .reload = "yes",
     .brief = "a replica whose replication lag (the heartbeat of sql/migrations/0005) passes "
              "this is out of rotation, and back in once within half of it; 0 turns the check "
              "off"},
    {.name = "webhooks_db_user",
     .field = &H::db_user,
     .group = kWebhooks,
     .reload = "restart",
     .brief = "the webhook deliverer's account on the primary (scripts/db-accounts: reads the "
              "service database and the secrets, writes only the delivery cursors and the lease); "
              "the worker ignores every webhooks_ key"},
    {.name = "webhooks_db_password",
     .field = &H::db_password,
     .secret = true,
     .group = kWebhooks,
     .reload = "restart",
     .brief = "its password: put it in /etc/connector/webhooks.env as "
              "CONNECTOR_WEBHOOKS_DB_PASSWORD, which only the deliverer's unit reads (the "
              "account reads every webhook secret; the worker must not hold it)"},
    {.name = "webhooks_allow_hosts",
     .field = &H::allow_hosts,
     .group = kWebhooks,
     .example = "hooks.internal,127.0.0.1",
     .reload = "restart",
     .brief = "receivers' hosts (comma-separated) that may be called over http and may resolve "
              "to loopback, private or link-local addresses; every other receiver is https to a "
              "public address"},
    {.name = "webhooks_ca_file",
     .field = &H::ca_file,
     .group = kWebhooks,
     .example = "/etc/connector/webhook-receivers-ca.pem",
     .reload = "restart",
     .brief = "CA certificates (PEM) receivers' certificates are verified against; empty: the "
              "system's"},
    {.name = "webhooks_timeout_ms",
     .field = &H::timeout_ms,
     .min = 100,
     .max = 120000,
     .group = kWebhooks,
     .reload = "restart",
     .brief = "the most one delivery may take, connection included; a receiver that has not "
              "answered 2xx by then gets the change again later"},
    {.name = "webhooks_connect_timeout_ms",
     .field = &H::connect_timeout_ms,
     .min = 100,
     .max = 60000,
     .group = kWebhooks,
     .reload = "restart",
     .brief = "the most a delivery's connection (TCP and TLS) may take"},
    {.name = "webhooks_poll_ms",
     .field = &H::poll_ms,
     .min = 10,
     .max = 10000,
     .group = kWebhooks,
     .reload = "restart",
     .brief = "how often the deliverer reads the change feed on the primary"},
    {.name = "webhooks_lease_ms",
     .field = &H::lease_ms,
     .min = 2000,
     .max = 600000,
     .group = kWebhooks,
     .reload = "restart",
     .brief = "one deliverer of the fleet delivers; another takes over when it has not renewed "
              "its lease on the primary for this long"},
    {.name = "webhooks_metrics_file",
     .field = &H::metrics_file,
     .group = kWebhooks,
     .example = "/var/lib/prometheus/node-exporter/connector_webhooks.prom",
     .reload = "restart",
     .brief = "where the deliverer writes its metrics every 5 s, for node_exporter's textfile "
              "collector; empty: none"},
};

// A switch: yes or no (as systemd and nginx spell them; on/off and true/false too).
bool parse_yes_no(const Key& key, std::string_view value) {
  if (value == "yes" || value == "on" || value == "true") return true;
  if (value == "no" || value == "off" || value == "false") return false;
  throw ConfigError(std::string(key.name) + " must be yes or no");
}

template <class Settings>
Settings& part(Config& c) {
  if constexpr (std::is_same_v<Settings, WorkerSettings>) {
    return c.worker;
  } else if constexpr (std::is_same_v<Settings, WebhookSettings>) {
    return c.webhooks;
  } else {
    return c.db;
  }
}

template <class Settings>
const Settings& part(const Config& c) {
  return part<Settings>(const_cast<Config&>(c));
}

// Which settings struct a member pointer belongs to.
template <class>
struct Owner;
template <class T, class S>
struct Owner<T S::*> {
  using type = S;
};

unsigned parse_unsigned(const Key& key, const std::string& value) {
  // Digits only: std::stoul alone would also take a sign or leading white space.
  const char last_digit = key.base == 8 ? '7' : '9';
  const bool digits = !value.empty() && std::all_of(value.begin(), value.end(), [&](char c) {
    return c >= '0' && c <= last_digit;
  });
  std::size_t used = 0;
  unsigned long parsed = 0;
  try {
    parsed = std::stoul(value, &used, key.base);
  } catch (const std::exception&) {
    used = 0;
  }
  if (!digits || used != value.size() || parsed < key.min || parsed > key.max) {
    throw ConfigError(std::string(key.name) + " must be a whole number from " +
                      std::to_string(key.min) + " to " + std::to_string(key.max));
  }
  return static_cast<unsigned>(parsed);
}

std::vector<DatabaseEndpoint> parse_endpoint_list(const Key& key, std::string_view list) {
  std::vector<DatabaseEndpoint> endpoints;
  while (!util::trim(list).empty()) {
    const auto comma = list.find(',');
    const auto endpoint = parse_endpoint(util::trim(list.substr(0, comma)));
    if (!endpoint) {
      throw ConfigError(std::string(key.name) +
                        " must list unix:/path or host:port entries, separated by commas");
    }
    endpoints.push_back(*endpoint);
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
  }
  // Each server read has a slot in the pool's shared state (pool::kMaxServerSlots, the
  // primary's included).
  if (endpoints.size() > kMaxReplicas) {
    throw ConfigError(std::string(key.name) + " lists at most " + std::to_string(kMaxReplicas) +
                      " replicas");
  }
  return endpoints;
}

std::string default_text(const Key& key) { return value_text(key, Config{}); }

std::string code(std::string_view text) { return "`" + std::string(text) + "`"; }

// A markdown cell: the default in code, "(empty)" for none.
std::string default_cell(const Key& key) {
  const std::string text = default_text(key);
  return text.empty() ? "(empty)" : code(text);
}

std::string range_cell(const Key& key) {
  if (!std::holds_alternative<unsigned W::*>(key.field) &&
      !std::holds_alternative<unsigned D::*>(key.field) &&
      !std::holds_alternative<unsigned H::*>(key.field)) {
    return "";
  }
  if (key.base == 8) {
    const auto octal = [](unsigned value) {
      std::ostringstream out;
      out << (value == 0 ? "" : "0") << std::oct << value;
      return out.str();
    };
    return code(octal(key.min)) + " to " + code(octal(key.max));
  }
  return std::to_string(key.min) + " to " + std::to_string(key.max);
}

// The brief, as comment lines of at most 96 characters, words as written.
std::string comment_lines(std::string_view text) {
  const std::string plain(text);
  std::string out, line = "#";
  std::istringstream words(plain);
  for (std::string word; words >> word;) {
    if (line.size() + 1 + word.size() > 96) {
      out += line + "\n";
      line = "#";
    }
    line += " " + word;
  }
  if (!plain.empty() && plain.back() != '.') line += ".";
  return out + line + "\n";
}

std::string example_file() {
  std::string out =
      "# connector-worker / connector-admin settings (installed as "
      "/etc/connector/connector.conf).\n"
      "# Generated from src/config/keys.cpp by scripts/config-docs: edit the table there.\n"
      "# Every key can be overridden by the environment as CONNECTOR_<KEY>: put secrets in\n"
      "# /etc/connector/connector.env (CONNECTOR_DB_PASSWORD=..., "
      "CONNECTOR_DB_WRITE_PASSWORD=...).\n"
      "# Values shown are the defaults. Reference: docs/operations.md, section 4.\n"
      "# Check a file without starting: connector-worker --config FILE --check-config\n";
  std::string_view group;
  for (const Key& key : kKeys) {
    if (key.group != group) {
      group = key.group;
      out += "\n# --- " + std::string(group) + "\n";
    }
    out += comment_lines(key.brief);
    const std::string value = default_text(key);
    if (value.empty() && !key.example.empty()) {
      out += "# " + std::string(key.name) + " = " + std::string(key.example) + "\n";
    } else {
      out += std::string(key.name) + " =" + (value.empty() ? "" : " " + value) + "\n";
    }
  }
  return out;
}

std::string readme_table() {
  std::string out = "| key | default | meaning |\n|---|---|---|\n";
  for (const Key& key : kKeys) {
    out +=
        "| " + code(key.name) + " | " + default_cell(key) + " | " + std::string(key.brief) + " |\n";
  }
  return out;
}

std::string operations_table() {
  std::string out =
      "| key | default | range | meaning | reload (SIGHUP) |\n|---|---|---|---|---|\n";
  for (const Key& key : kKeys) {
    const std::string_view meaning = key.detail.empty() ? key.brief : key.detail;
    out += "| " + code(key.name) + " | " + default_cell(key) + " | " + range_cell(key) + " | " +
           std::string(meaning) + " | " + std::string(key.reload) + " |\n";
  }
  return out;
}

}  // namespace

std::span<const Key> keys() { return kKeys; }

void set(const Key& key, Config& config, const std::string& value) {
  std::visit(
      [&](auto member) {
        using Settings = typename Owner<decltype(member)>::type;
        auto& target = part<Settings>(config).*member;
        using T = std::remove_reference_t<decltype(target)>;
        if constexpr (std::is_same_v<T, unsigned>) {
          target = parse_unsigned(key, value);
        } else if constexpr (std::is_same_v<T, bool>) {
          target = parse_yes_no(key, value);
        } else if constexpr (std::is_same_v<T, std::string>) {
          target = value;
        } else {
          target = parse_endpoint_list(key, value);
        }
      },
      key.field);
}

std::string value_text(const Key& key, const Config& config) {
  return std::visit(
      [&](auto member) -> std::string {
        using Settings = typename Owner<decltype(member)>::type;
        const auto& value = part<Settings>(config).*member;
        using T = std::remove_cvref_t<decltype(value)>;
        if constexpr (std::is_same_v<T, bool>) {
          return value ? "yes" : "no";
        } else if constexpr (std::is_same_v<T, unsigned>) {
          if (key.base != 8) return std::to_string(value);
          std::ostringstream octal;
          octal << '0' << std::oct << value;
          return octal.str();
        } else if constexpr (std::is_same_v<T, std::string>) {
          return value;
        } else {
          std::string list;
          for (const auto& e : value) list += (list.empty() ? "" : ",") + e.describe();
          return list;
        }
      },
      key.field);
}

std::string config_document(std::string_view which) {
  if (which == "example") return example_file();
  if (which == "readme") return readme_table();
  if (which == "operations") return operations_table();
  throw std::invalid_argument("no such document: " + std::string(which) +
                              " (example, readme, operations)");
}

}  // namespace connector::config
