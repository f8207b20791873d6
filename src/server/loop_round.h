// One round of the event loop's work: the handlers ready now, but at most a bounded number.
//
// Not io_context::poll(), which returns only once nothing is ready: under a load that keeps
// requests coming (pipelining clients, or many connections whose replies go out at once) it
// ran for as long as the load lasted, and the work the loop does between rounds waited with
// it: the log's hand-over (LoopHooks::end_of_round), which with --fsync never let records
// pile up in memory for hundreds of milliseconds instead of the 10 ms the log promises.
#pragma once

#include <cstddef>

#include <boost/asio/io_context.hpp>

namespace holdfast {

// Enough for one reply to every connection of a busy server several times over, and little
// enough that a round lasts a few milliseconds at most.
inline constexpr std::size_t kRoundHandlers = 256;

// Runs ready handlers (and the reactor's non-blocking look for more) until none is ready or
// `max` have run; returns how many ran.
inline std::size_t run_round(boost::asio::io_context& io, std::size_t max = kRoundHandlers) {
  std::size_t handlers = 0;
  while (handlers < max && io.poll_one() > 0) ++handlers;
  return handlers;
}

}  // namespace holdfast
