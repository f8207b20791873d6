// gnuplot charts: see charts.h.
#include "charts.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "process.h"

namespace holdfast::bench {

namespace {

// One line of a panel: a target's figures of one workload, by connection count.
struct Series {
  std::string workload;
  std::string target;
  std::vector<const Measurement*> points;
};

std::string color_of(const std::string& target) {
  static const std::map<std::string, std::string> colors = {{"holdfast-always", "#1b5e20"},
                                                            {"holdfast-never", "#43a047"},
                                                            {"holdfast-horizon", "#2e7d32"},
                                                            {"redis", "#c62828"},
                                                            {"holdfast-redis-always", "#827717"},
                                                            {"holdfast-redis-never", "#c0ca33"},
                                                            {"redis-aof", "#ef6c00"},
                                                            {"holdfast-sem-always", "#4e342e"},
                                                            {"holdfast-sem-never", "#8d6e63"},
                                                            {"redis-sem", "#ad1457"},
                                                            {"redis-sem-aof", "#f06292"},
                                                            {"postgres", "#1565c0"},
                                                            {"etcd", "#6a1b9a"},
                                                            {"holdfast-pg1", "#80cbc4"},
                                                            {"holdfast-pg2", "#26a69a"},
                                                            {"holdfast-pg3", "#00695c"}};
  auto it = colors.find(target);
  return it == colors.end() ? "#555555" : it->second;
}

}  // namespace

namespace {

// The workloads the charts draw.
constexpr std::array<const char*, 3> kCharted{"pairs", "floor", "pipeline"};

}  // namespace

bool has_chart_figures(const SuiteResults& results) {
  for (const auto& m : results.measurements)
    for (const char* workload : kCharted)
      if (!m.failed && m.workload == workload) return true;
  return false;
}

std::string draw_charts(const SuiteResults& results, const std::filesystem::path& throughput_png,
                        const std::filesystem::path& p99_png) {
  std::vector<Series> series;
  for (const char* workload : kCharted) {
    for (const TargetInfo& info : results.targets) {
      const std::string& target = info.name;
      Series s{workload, target, {}};
      for (const auto& m : results.measurements) {
        if (m.workload == workload && m.target == target && !m.failed) s.points.push_back(&m);
      }
      std::sort(s.points.begin(), s.points.end(),
                [](auto* a, auto* b) { return a->connections < b->connections; });
      if (!s.points.empty()) series.push_back(std::move(s));
    }
  }
  if (series.empty()) return "no streaming figures to draw";

  const std::filesystem::path data =
      throughput_png.parent_path() / (throughput_png.stem().string() + ".dat.tmp");
  const std::filesystem::path script =
      throughput_png.parent_path() / (throughput_png.stem().string() + ".gp.tmp");
  {
    std::ofstream d(data);
    for (const Series& s : series) {
      d << "# " << s.workload << " " << s.target << "\n";
      for (const Measurement* m : s.points) {
        d << m->connections << " " << m->ops_per_sec << " " << static_cast<double>(m->p99_ns) / 1e3
          << "\n";
      }
      d << "\n\n";
    }
  }

  std::string xtics;
  for (int c : results.options.connections)
    xtics += (xtics.empty() ? "" : ", ") + std::to_string(c);
  // One panel's plot command: `column` 2 = ops/s, 3 = p99 µs.
  auto plot = [&](const std::vector<std::string>& workloads, int column) {
    std::ostringstream p;
    p << "plot ";
    bool first = true;
    for (std::size_t i = 0; i < series.size(); ++i) {
      const Series& s = series[i];
      if (std::find(workloads.begin(), workloads.end(), s.workload) == workloads.end()) continue;
      const bool floor = s.workload == "floor";
      p << (first ? "" : ", \\\n     ") << "'" << data.string() << "' index " << i
        << " using 1:" << column << " with linespoints lw 2 pt 7 ps 0.8 " << (floor ? "dt 2 " : "")
        << "lc rgb '" << color_of(s.target) << "' title '" << (floor ? "floor: PING+PING on " : "")
        << s.target << "'";
      first = false;
    }
    // An empty panel (its workload was not run) still needs a y range to draw on.
    if (first) return std::string("set yrange [1:10]\nplot NaN notitle\nset autoscale y");
    return p.str();
  };

  std::ofstream g(script);
  g << "set terminal pngcairo size 1400,640 font 'sans,10'\n"
    << "set logscale x 2\nset logscale y 10\nset grid\nset key outside bottom center horizontal "
       "maxrows 3\n"
    << "set xlabel 'connections'\n"
    << "set xtics (" << xtics << ")\n"
    << "set xrange [" << std::max(0.7, results.options.connections.front() * 0.7) << ":"
    << results.options.connections.back() * 1.4 << "]\n";
  g << "set output '" << throughput_png.string() << "'\n"
    << "set multiplot layout 1,2 title 'Holdfast benchmark: throughput (higher is better)'\n"
    << "set title '(a) try-acquire + release pairs/s (floor: PING+PING pairs/s)'\nset ylabel 'per "
       "second'\n"
    << plot({"pairs", "floor"}, 2) << "\n"
    << "set title '(c) pipelined try-acquires/s, depth " << results.options.depth << "'\n"
    << plot({"pipeline"}, 2) << "\nunset multiplot\n";
  g << "set output '" << p99_png.string() << "'\n"
    << "set multiplot layout 1,2 title 'Holdfast benchmark: p99 latency (lower is better)'\n"
    << "set title '(a) p99 of one try+release pair, µs'\nset ylabel 'µs'\n"
    << plot({"pairs", "floor"}, 3) << "\n"
    << "set title '(c) p99 of one pipelined try-acquire, µs'\n"
    << plot({"pipeline"}, 3) << "\nunset multiplot\n";
  g.close();

  std::string output;
  const int rc = run_command({"gnuplot", script.string()}, output);
  std::error_code ec;
  std::filesystem::remove(data, ec);
  std::filesystem::remove(script, ec);
  if (rc != 0) return "gnuplot failed (" + std::to_string(rc) + "): " + output.substr(0, 300);
  return "";
}

}  // namespace holdfast::bench
