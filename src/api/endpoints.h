#pragma once
// The seven endpoints. Each validates its parameters, asks the stores, writes its JSON body and
// returns the Cache-Control for it; errors are thrown (http::ApiError, db::DatabaseUnavailable)
// and answered in one place, the router.
#include <span>
#include <string>
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
  // The database servers the process reads, for the operations pages (metrics::DbServers).
  std::span<const std::string> db_servers = {};
  // The current request's deadline (the router sets it).
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

// How an answer may be cached: its Cache-Control for every cache, and whether the front cache
// (nginx) may store it. An answer it must not store gets X-Accel-Expires: 0, which nginx reads
// and does not pass on; clients and other caches still follow Cache-Control.
struct CachePolicy {
  constexpr CachePolicy(std::string_view cache_control, bool front_cache = true)  // NOLINT
      : cache_control(cache_control), front_cache(front_cache) {}
  std::string_view cache_control;
  bool front_cache;
};

using Endpoint = CachePolicy (*)(const http::QueryParams& params, Services& services,
                                 json::JsonWriter& out);

CachePolicy networks(const http::QueryParams& params, Services& services, json::JsonWriter& out);
CachePolicy connects(const http::QueryParams& params, Services& services, json::JsonWriter& out);
CachePolicy pairs(const http::QueryParams& params, Services& services, json::JsonWriter& out);
CachePolicy account(const http::QueryParams& params, Services& services, json::JsonWriter& out);
CachePolicy history(const http::QueryParams& params, Services& services, json::JsonWriter& out);
CachePolicy history_by_hash(const http::QueryParams& params, Services& services,
                            json::JsonWriter& out);
CachePolicy chain_supply(const http::QueryParams& params, Services& services,
                         json::JsonWriter& out);

// Cache-Control values of docs/openapi.yaml; ops override them in nginx.
inline constexpr std::string_view kReferenceCacheControl = "public, max-age=60";
inline constexpr std::string_view kAccountCacheControl = "public, max-age=86400, immutable";
inline constexpr std::string_view kHistoryCacheControl = "public, max-age=2";
inline constexpr std::string_view kFinalRecordCacheControl = "public, max-age=3600";
inline constexpr std::string_view kSupplyCacheControl = "public, max-age=5";

}  // namespace connector::api
