#pragma once
// Operations paths beside the API: liveness, readiness, metrics and pool status. nginx exposes
// them to internal addresses only. They write into the body buffer directly (not all are JSON)
// and return their Content-Type.
#include <rapidjson/stringbuffer.h>

#include <string_view>

#include "api/endpoints.h"

namespace connector::api {

using OpsEndpoint = std::string_view (*)(const Services& services, rapidjson::StringBuffer& out);

// 200 while the process answers at all.
std::string_view healthz(const Services& services, rapidjson::StringBuffer& out);
// 200 when the database answers a trivial query within the connect/statement bounds, else 503.
std::string_view readyz(const Services& services, rapidjson::StringBuffer& out);
std::string_view prometheus_metrics(const Services& services, rapidjson::StringBuffer& out);
std::string_view pool_status(const Services& services, rapidjson::StringBuffer& out);

struct OpsRoute {
  std::string_view path;
  OpsEndpoint endpoint;
};
inline constexpr OpsRoute kOpsRoutes[] = {
    {"/healthz", healthz},
    {"/readyz", readyz},
    {"/metrics", prometheus_metrics},
    {"/status", pool_status},
};

}  // namespace connector::api
