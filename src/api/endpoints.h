#pragma once
// The seven endpoints. Each validates its parameters, asks the stores, writes its JSON body and
// returns the Cache-Control for it; errors are thrown (http::ApiError, db::DatabaseUnavailable)
// and answered in one place, the router.
#include <string_view>

#include "db/reference_store.h"
#include "db/stores.h"
#include "db/supply_store.h"
#include "http/query_string.h"
#include "json/json_writer.h"

namespace connector::api {

// What an endpoint may use: the thread's stores (over its read and write connections) and the
// process's shared snapshots.
struct Services {
  db::HistoryStore& history;
  db::DepositAccountStore& accounts;
  db::ReadinessCheck& readiness;
  db::ReferenceCache& reference;
  db::SupplyCache& supply;
  // The current request's deadline (the router sets it).
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

using Endpoint = std::string_view (*)(const http::QueryParams& params, Services& services,
                                      json::JsonWriter& out);

std::string_view networks(const http::QueryParams& params, Services& services,
                          json::JsonWriter& out);
std::string_view connects(const http::QueryParams& params, Services& services,
                          json::JsonWriter& out);
std::string_view pairs(const http::QueryParams& params, Services& services, json::JsonWriter& out);
std::string_view account(const http::QueryParams& params, Services& services,
                         json::JsonWriter& out);
std::string_view history(const http::QueryParams& params, Services& services,
                         json::JsonWriter& out);
std::string_view history_by_hash(const http::QueryParams& params, Services& services,
                                 json::JsonWriter& out);
std::string_view chain_supply(const http::QueryParams& params, Services& services,
                              json::JsonWriter& out);

// Cache-Control values from decisions.md; ops override them in nginx.
inline constexpr std::string_view kReferenceCacheControl = "public, max-age=60";
inline constexpr std::string_view kAccountCacheControl = "public, max-age=86400, immutable";
inline constexpr std::string_view kHistoryCacheControl = "public, max-age=2";
inline constexpr std::string_view kFinalRecordCacheControl = "public, max-age=3600";
inline constexpr std::string_view kSupplyCacheControl = "public, max-age=5";

}  // namespace connector::api
