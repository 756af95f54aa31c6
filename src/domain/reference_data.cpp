#include "domain/reference_data.h"

#include <algorithm>

#include "domain/history.h"

namespace connector::domain {
namespace {

template <typename T, typename Pred>
const T* find_if_ptr(const std::vector<T>& items, Pred pred) {
  const auto it = std::find_if(items.begin(), items.end(), pred);
  return it == items.end() ? nullptr : &*it;
}

}  // namespace

const Chain* ReferenceData::chain_by_slug(std::string_view slug) const {
  return find_if_ptr(chains, [&](const Chain& c) { return c.slug == slug; });
}

const Chain* ReferenceData::chain_by_ref(std::uint16_t ref) const {
  return find_if_ptr(chains, [&](const Chain& c) { return c.ref == ref; });
}

const Asset* ReferenceData::asset_by_id(std::uint64_t id) const {
  return find_if_ptr(assets, [&](const Asset& a) { return a.id == id; });
}

bool ReferenceData::connected(std::uint16_t chain_x, std::uint16_t chain_y) const {
  return std::any_of(connects.begin(), connects.end(), [&](const Connect& c) {
    return (c.chain_a == chain_x && c.chain_b == chain_y) ||
           (c.chain_a == chain_y && c.chain_b == chain_x);
  });
}

bool ReferenceData::covers(const HistoryRecord& r) const {
  return chain_by_ref(r.source_chain) && chain_by_ref(r.destination_chain) &&
         asset_by_id(r.source_asset_id) && asset_by_id(r.destination_asset_id);
}

}  // namespace connector::domain
