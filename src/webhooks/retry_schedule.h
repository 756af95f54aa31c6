#pragma once
// When a delivery that was not acknowledged is tried again (docs/webhooks.md): exponential
// backoff from 1 s, doubling to at most 1 h, each wait drawn uniformly from its upper half
// ("equal jitter": never a burst of receivers' retries in step, never a wait under half its
// step); after 24 h of failures the subscription is marked failing (and keeps being tried, at
// the longest step, until an operator disables it or the receiver answers).
#include <chrono>
#include <cstdint>

namespace connector::webhooks {

using std::chrono::milliseconds;

inline constexpr milliseconds kFirstRetry{1000};
inline constexpr milliseconds kLongestRetry{3'600'000};
inline constexpr std::chrono::hours kFailingAfter{24};

// The wait before attempt `attempt` + 1, after `attempt` failed ones (attempt >= 1), with
// `uniform` in [0, 1) the jitter's draw (the caller's random source; a test's fixed one).
milliseconds retry_delay(std::uint32_t attempt, double uniform);

// Whether failures since `failing_since` make the subscription failing at `now`.
bool is_failing(std::chrono::system_clock::time_point failing_since,
                std::chrono::system_clock::time_point now);

}  // namespace connector::webhooks
