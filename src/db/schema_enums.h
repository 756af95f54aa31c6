#pragma once
// Every ENUM (and SET) of the migrated schema (sql/migrations/) with the values the code knows
// for it, in the schema's order: statuses are read as ENUM indexes into the C++ enums
// (read_value), and the other values are written, bound or compared as text (a webhook
// subscription's statuses, a SET, as the names joined by commas). tests/integration/
// test_schema.py reads each ENUM and SET column and routine parameter from information_schema
// and compares it with this table, both ways, so a migration that adds a value, or a column the
// code does not know, fails a test.
#include <span>
#include <string_view>

#include "db/history_statements.h"
#include "domain/chain_status.h"
#include "domain/history.h"
#include "domain/reference_data.h"

namespace connector::db {

struct SchemaEnum {
  std::string_view table;   // or the stored routine
  std::string_view column;  // or its parameter
  std::span<const std::string_view> values;
};

inline constexpr SchemaEnum kSchemaEnums[] = {
    {"chains", "base_chain", domain::kBaseChains},
    {"chain_status", "status", domain::kChainStatuses},
    {"assets", "asset_type", domain::kAssetTypes},
    {"history", "status", domain::kHistoryStatuses},
    {"history_counts", "status", domain::kHistoryStatuses},
    {"history_address_counts", "address_column", kCountedAddressColumns},
    {"history_address_counts", "status", domain::kHistoryStatuses},
    {"history_address_counts_add", "record_status", domain::kHistoryStatuses},
    {"history_changes", "status", domain::kHistoryStatuses},
    {"webhook_subscriptions", "statuses", domain::kHistoryStatuses},
};

}  // namespace connector::db
