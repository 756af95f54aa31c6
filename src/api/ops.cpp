#include "api/ops.h"

#include <rapidjson/writer.h>

#include <memory>

#include "api/router.h"
#include "metrics/exposition.h"
#include "util/clock.h"

namespace connector::api {
namespace {

constexpr std::string_view kJson = "application/json; charset=utf-8";

void put(rapidjson::StringBuffer& out, std::string_view text) {
  for (char c : text) out.Put(c);
}

}  // namespace

std::string_view healthz(const Services&, rapidjson::StringBuffer& out) {
  put(out, R"({"status":"ok"})");
  return kJson;
}

std::string_view readyz(const Services& services, rapidjson::StringBuffer& out) {
  services.readiness.check();
  rapidjson::Writer<rapidjson::StringBuffer> w(out);
  w.StartObject();
  w.Key("status");
  w.String("ready");
  w.Key("servers");
  metrics::write_db_servers(services.pool_state, services.db_servers, util::unix_ms_now(), w);
  w.EndObject();
  return kJson;
}

std::string_view prometheus_metrics(const Services& services, rapidjson::StringBuffer& out) {
  metrics::write_prometheus(metrics::scoreboard(), services.pool_state, endpoint_labels(),
                            services.db_servers, util::unix_ms_now(), out);
  return "text/plain; version=0.0.4; charset=utf-8";
}

std::string_view pool_status(const Services& services, rapidjson::StringBuffer& out) {
  metrics::write_status(metrics::scoreboard(), services.pool_state, services.db_servers,
                        util::unix_ms_now(), out);
  return kJson;
}

}  // namespace connector::api
