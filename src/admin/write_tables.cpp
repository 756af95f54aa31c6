#include "admin/write_tables.h"

namespace connector::admin {
namespace {

using db::bind;
using db::bind_or_null;
using domain::DirectionSettings;

// The column that writes the id of the chain a row names by its slug.
template <auto Slug>
constexpr auto chain_ref(std::string_view column) {
  using Row = decltype(db::detail::class_of(Slug));
  return db::WriteColumn<Row, ChainRefs>{column,
                                         [](const Row& row, const ChainRefs& refs) -> db::Param {
                                           return std::uint64_t{refs.at(row.*Slug)};
                                         }};
}

constexpr db::WriteColumn<NetworkRow> kChainColumns[] = {
    bind<&NetworkRow::slug>("slug"),
    bind<&NetworkRow::network>("network"),
    bind<&NetworkRow::chain_id>("chain_id"),
    bind<&NetworkRow::base_chain>("base_chain"),
    bind_or_null<&NetworkRow::deposit_factory>("deposit_factory"),
    bind_or_null<&NetworkRow::deposit_init_code_hash>("deposit_init_code_hash"),
};

constexpr db::WriteColumn<AssetRow, ChainRefs> kAssetColumns[] = {
    bind<&AssetRow::id>("id"),
    chain_ref<&AssetRow::slug>("chain_ref"),
    bind<&AssetRow::address>("address"),  // empty for the coin, not NULL
    bind<&AssetRow::name>("name"),
    bind<&AssetRow::symbol>("symbol"),
    bind<&AssetRow::decimals>("decimals"),
    bind<&AssetRow::asset_type>("asset_type"),
};

constexpr db::WriteColumn<ConnectRow, ChainRefs> kConnectColumns[] = {
    chain_ref<&ConnectRow::slug_a>("chain_a"),
    chain_ref<&ConnectRow::slug_b>("chain_b"),
};

constexpr db::WriteColumn<PairRow> kPairColumns[] = {
    bind<&PairRow::id>("id"),
    bind<&PairRow::asset_a_id>("asset_a_id"),
    bind<&PairRow::asset_b_id>("asset_b_id"),
    bind<&PairRow::a2b, &DirectionSettings::min_deposit_amount>("a2b_min_deposit_amount"),
    bind<&PairRow::a2b, &DirectionSettings::fee_percent_millionths>("a2b_fee_percent_millionths"),
    bind<&PairRow::a2b, &DirectionSettings::fee_min_amount>("a2b_fee_min_amount"),
    bind<&PairRow::a2b, &DirectionSettings::auto_confirm_deposit_amount>(
        "a2b_auto_confirm_deposit_amount"),
    bind<&PairRow::a2b, &DirectionSettings::disabled>("a2b_disabled"),
    bind<&PairRow::b2a, &DirectionSettings::min_deposit_amount>("b2a_min_deposit_amount"),
    bind<&PairRow::b2a, &DirectionSettings::fee_percent_millionths>("b2a_fee_percent_millionths"),
    bind<&PairRow::b2a, &DirectionSettings::fee_min_amount>("b2a_fee_min_amount"),
    bind<&PairRow::b2a, &DirectionSettings::auto_confirm_deposit_amount>(
        "b2a_auto_confirm_deposit_amount"),
    bind<&PairRow::b2a, &DirectionSettings::disabled>("b2a_disabled"),
};

constexpr db::WriteColumn<ChainStatusRow, ChainRefs> kChainStatusColumns[] = {
    chain_ref<&ChainStatusRow::slug>("chain_ref"),
    bind<&ChainStatusRow::status>("status"),
    bind<&ChainStatusRow::latest_height>("latest_height"),
    bind<&ChainStatusRow::supply>("supply"),
};

// Optional columns are NULL until the nodes record them.
constexpr db::WriteColumn<HistoryRow, ChainRefs> kHistoryColumns[] = {
    bind<&HistoryRow::id>("id"),
    bind<&HistoryRow::hash>("hash"),
    bind<&HistoryRow::pair_id>("pair_id"),
    chain_ref<&HistoryRow::source_slug>("source_chain"),
    chain_ref<&HistoryRow::destination_slug>("destination_chain"),
    bind<&HistoryRow::source_deposit_address>("source_deposit_address"),
    bind<&HistoryRow::source_sender>("source_sender"),
    bind<&HistoryRow::destination_address>("destination_address"),
    bind<&HistoryRow::source_block_number>("source_block_number"),
    bind_or_null<&HistoryRow::destination_block_number>("destination_block_number"),
    bind<&HistoryRow::source_block_timestamp>("source_block_timestamp"),
    bind_or_null<&HistoryRow::destination_block_timestamp>("destination_block_timestamp"),
    bind<&HistoryRow::source_tx_hash>("source_tx_hash"),
    bind<&HistoryRow::source_tx_index>("source_tx_index"),
    bind_or_null<&HistoryRow::destination_tx_hash>("destination_tx_hash"),
    bind<&HistoryRow::source_asset_id>("source_asset_id"),
    bind<&HistoryRow::destination_asset_id>("destination_asset_id"),
    bind<&HistoryRow::source_amount>("source_amount"),
    bind_or_null<&HistoryRow::destination_amount>("destination_amount"),
    bind_or_null<&HistoryRow::fee>("fee"),
    bind<&HistoryRow::status>("status"),
    bind_or_null<&HistoryRow::status_message>("status_message"),
};

constexpr db::WriteColumn<DepositAccountRow, ChainRefs> kDepositAccountColumns[] = {
    chain_ref<&DepositAccountRow::deposit_slug>("deposit_chain"),
    bind<&DepositAccountRow::deposit_address>("deposit_address"),
    chain_ref<&DepositAccountRow::recipient_slug>("recipient_chain"),
    bind<&DepositAccountRow::recipient_address>("recipient_address"),
};

}  // namespace

// Each table's key: its first columns (what an upsert leaves alone).
constexpr db::WriteTable<NetworkRow> kChainsTable{"chains", kChainColumns, 1};
constexpr db::WriteTable<AssetRow, ChainRefs> kAssetsTable{"assets", kAssetColumns, 1};
constexpr db::WriteTable<ConnectRow, ChainRefs> kConnectsTable{"connects", kConnectColumns, 2};
constexpr db::WriteTable<PairRow> kPairsTable{"pairs", kPairColumns, 1};
constexpr db::WriteTable<ChainStatusRow, ChainRefs> kChainStatusTable{"chain_status",
                                                                      kChainStatusColumns, 1};
constexpr db::WriteTable<HistoryRow, ChainRefs> kHistoryTable{"history", kHistoryColumns, 1};
constexpr db::WriteTable<DepositAccountRow, ChainRefs> kDepositAccountsTable{
    "deposit_accounts", kDepositAccountColumns, 2};

}  // namespace connector::admin
