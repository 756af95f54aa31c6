#pragma once
// The columns connector-admin writes, one table per row type of an import batch: each row's
// INSERT, its placeholders and its values come from these (db/write_statement.h). The values
// that name a chain are written as its id (chains.id), looked up by slug in the ChainRefs the
// writer passes along.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "admin/import_document.h"
#include "db/write_statement.h"

namespace connector::admin {

// chains.slug -> chains.id
using ChainRefs = std::map<std::string, std::uint16_t>;

extern const db::WriteTable<NetworkRow> kChainsTable;
extern const db::WriteTable<AssetRow, ChainRefs> kAssetsTable;
extern const db::WriteTable<ConnectRow, ChainRefs> kConnectsTable;
extern const db::WriteTable<PairRow> kPairsTable;
extern const db::WriteTable<ChainStatusRow, ChainRefs> kChainStatusTable;
extern const db::WriteTable<HistoryRow, ChainRefs> kHistoryTable;
extern const db::WriteTable<DepositAccountRow, ChainRefs> kDepositAccountsTable;

// A connect is new when it is stored in neither orientation (for insert_where_sql).
inline constexpr std::string_view kNewConnect =
    "NOT EXISTS (SELECT 1 FROM connects AS c WHERE (c.chain_a = new_row.chain_a AND "
    "c.chain_b = new_row.chain_b) OR (c.chain_a = new_row.chain_b AND c.chain_b = "
    "new_row.chain_a))";

}  // namespace connector::admin
