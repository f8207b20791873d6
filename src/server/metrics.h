// Metrics in the Prometheus text exposition format (GET /metrics). Counters of the lock table
// and the store are read when rendered; the command latency histogram is recorded here.
// Single-threaded: touched only on the event loop (the call runner observes each command when
// its answer arrives).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "server/tls/handshake_failure.h"
#include "service/lock_service.h"

namespace holdfast {

// Appends one metric of one series (its HELP and TYPE lines, then its value), for metrics
// kept elsewhere (the event bus, pub/sub).
void append_metric(std::string& out, const char* name, const char* type, const char* help,
                   double value);

class Metrics {
 public:
  static constexpr std::array<double, 17> kBucketsSeconds = {
      0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
      0.01,    0.025,    0.05,    0.1,    0.25,    0.5,    1.0,   2.5};

  // Registers a `command` label value; returns the id to observe() with. Before any observe().
  std::size_t add_command(std::string_view label);
  void observe(std::size_t command, std::chrono::nanoseconds elapsed);
  // How many of commands [first, last) were observed (INFO's total_commands_processed).
  std::uint64_t observed(std::size_t first, std::size_t last) const;

  struct Gauges {
    std::size_t connections = 0;
    std::size_t active = 0;  // of those (about), the ones that sent requests lately
    double loop_poll_seconds = 0;
  };
  std::string render(const ServiceStats& stats, const Gauges& gauges) const;

  // TLS listeners: a handshake that failed, and connections whose handshake finished, opened
  // and closed (holdfast_tls_connections counts those open).
  void tls_handshake_failed(tls::HandshakeFailure why) {
    ++tls_failures_[static_cast<std::size_t>(why)];
  }
  void tls_opened() { ++tls_open_; }
  void tls_closed() { --tls_open_; }
  std::uint64_t tls_handshake_failures(tls::HandshakeFailure why) const {
    return tls_failures_[static_cast<std::size_t>(why)];
  }

 private:
  struct Histogram {
    std::string label;
    std::array<std::uint64_t, kBucketsSeconds.size()> buckets{};  // not cumulative
    std::uint64_t count = 0;
    std::uint64_t sum_nanos = 0;
  };

  std::vector<Histogram> histograms_;
  std::array<std::uint64_t, tls::kHandshakeFailureKinds> tls_failures_{};
  std::size_t tls_open_ = 0;
};

}  // namespace holdfast
