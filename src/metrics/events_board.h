#pragma once
// api/ still names the publisher's shared state metrics::EventsBoard: it is pool::EventsBoard
// (pool/events_board.h), control state rather than figures. Goes once api/ includes pool/.
#include "pool/events_board.h"

namespace connector::metrics {

using EventsBoard = pool::EventsBoard;

}  // namespace connector::metrics
