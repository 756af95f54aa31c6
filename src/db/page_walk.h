#pragma once
// How to reach a page of history: which way to walk the index and how far. With an exact
// total, a deep page can be reached from either end: the DESC page at offset o of t records is
// the ASC page at offset t - o - rows, read backwards. InnoDB walks an index backwards about
// half as fast as forwards (unfiltered, offset 100,000: 12.8 ms ASC, 24.4 ms DESC on the
// benchmark machine), so a backward step counts double. Offsets under 10,000 are always walked
// as asked: too little to gain for the extra statements a reversed walk needs.
#include <cstdint>

#include "domain/history.h"

namespace connector::db {

struct PageWalk {
  domain::SortOrder order;
  std::uint64_t offset;
  std::uint32_t limit;
  bool reversed;  // walked from the other end than the one asked for

  bool operator==(const PageWalk&) const = default;
};

inline constexpr std::uint64_t kReverseWalkFromOffset = 10'000;

// The cheaper way to the page at `offset` of `total` records in `order`.
PageWalk cheapest_walk(std::uint64_t total, std::uint64_t offset, std::uint32_t limit,
                       domain::SortOrder order);

}  // namespace connector::db
