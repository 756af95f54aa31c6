#include "db/page_walk.h"

#include <algorithm>

namespace connector::db {

PageWalk cheapest_walk(std::uint64_t total, std::uint64_t offset, std::uint32_t limit,
                       domain::SortOrder order) {
  const PageWalk asked{order, offset, limit, false};
  if (offset < kReverseWalkFromOffset || offset >= total) return asked;
  const std::uint64_t rows = std::min<std::uint64_t>(limit, total - offset);
  const std::uint64_t other_offset = total - offset - rows;
  const bool forwards = order == domain::SortOrder::kAscending;
  const std::uint64_t cost = forwards ? offset : 2 * offset;
  const std::uint64_t other_cost = forwards ? 2 * other_offset : other_offset;
  if (other_cost >= cost) return asked;
  return {forwards ? domain::SortOrder::kDescending : domain::SortOrder::kAscending, other_offset,
          static_cast<std::uint32_t>(rows), true};
}

}  // namespace connector::db
