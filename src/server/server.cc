#include "server/server.h"

#include <sched.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/post.hpp>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <utility>

#include "server/events/fanout_metrics.h"
#include "server/logging.h"
#include "server/loop_round.h"
#include "server/sd_notify.h"
#include "server/tls/load.h"

namespace holdfast {

namespace fs = std::filesystem;
using boost::asio::ip::tcp;
using boost::asio::local::stream_protocol;

namespace {

bool is_loopback_host(const std::string& host) {
  if (host == "localhost") return true;
  boost::system::error_code ec;
  auto addr = boost::asio::ip::make_address(host, ec);
  return !ec && addr.is_loopback();
}

// HELLO's and INFO's version: the project's (src/server/CMakeLists.txt).
constexpr const char* kVersion = HOLDFAST_VERSION;

}  // namespace

Server::Server(const ServerConfig& config, const Clock& clock, const Authenticator* auth)
    : config_(config),
      clock_(clock),
      auth_(auth),
      loop_(io_, clock),
      scripts_(script::Limits{config.script_time_limit_ms, script::kDefaultMemoryBytes}),
      info_{kVersion, auth != nullptr},
      signals_(io_, SIGINT, SIGTERM),
      reload_signal_(io_, SIGHUP),
      shutdown_deadline_(io_),
      accept_pause_(io_),
      commit_wait_(io_),
      idle_poll_(config.idle_poll_us) {
  info_.store = config.store_url.empty() ? "embedded" : "postgres";
  info_.fsync = std::string(fsync_name(config.fsync));
  lazy_log_ = config.fsync == FsyncMode::kNever;
  info_.unix_path = config.unix_path;
  info_.data_dir = config.data_dir;
  for (const auto& c : resp::command_table()) metrics_.add_command(c.name);
  for (const auto& r : http::route_table()) {
    const std::string parameter = r.suffix.empty() ? "" : "{key}" + std::string(r.suffix);
    metrics_.add_command(r.label.empty()
                             ? std::string(r.method) + " " + std::string(r.path) + parameter
                             : std::string(r.label));
  }
  view_.metrics = [this] {
    const double polled_seconds = static_cast<double>(idle_poll_.polled_total()) / 1e6;
    std::string out = metrics_.render(
        service_->stats(), Metrics::Gauges{connection_count(), active_.count(), polled_seconds});
    append_fanout_metrics(out, events_->stats(), pubsub_.stats());
    return out;
  };
  view_.not_ready = [this]() -> std::optional<Error> {
    if (stopping_) return Error(ErrorCode::kUnavailable, "the server is shutting down");
    const ServiceStats stats = service_->stats();
    if (stats.recovering_until > 0) return recovering_error(stats.recovering_until);
    return stats.store.fault;
  };
  view_.ready_details = [this] {
    std::vector<std::pair<std::string, std::string>> details;
    const ServiceStats stats = service_->stats();
    if (const auto& r = stats.replication) {
      details.emplace_back("replication", r->state);
      if (!r->warning.empty()) details.emplace_back("warning", r->warning);
      if (!r->primary.empty()) details.emplace_back("primary", r->primary);
    }
    return details;
  };
  cors_.allowed_origins = config.cors_allowed_origins;
}

Server::~Server() {
  if (unix_ && !config_.unix_path.empty()) {
    std::error_code ignored;
    fs::remove(config_.unix_path, ignored);
  }
}

Status Server::check_open_mode() const {
  if (auth_ != nullptr || config_.listen.empty()) return ok_status();
  for (const std::string* addr : {&config_.listen, &config_.http}) {
    if (addr->empty()) continue;
    auto hp = split_host_port(*addr);
    if (!hp.ok()) return std::move(hp).error();
    if (!is_loopback_host(hp->first)) {
      return invalid_argument("refusing to serve " + *addr +
                              " in local open mode: without [auth] credentials every caller is an "
                              "owner, so only loopback addresses and the Unix socket are allowed");
    }
  }
  return ok_status();
}

Status Server::bind_tcp(const std::string& address, const char* what,
                        std::optional<tcp::acceptor>& acceptor, std::string& bound_address) {
  if (address.empty()) return ok_status();
  auto hp = split_host_port(address);
  if (!hp.ok()) return std::move(hp).error();
  boost::system::error_code ec;
  auto addr = hp->first == "localhost" ? boost::asio::ip::make_address("127.0.0.1")
                                       : boost::asio::ip::make_address(hp->first, ec);
  if (ec)
    return invalid_argument(std::string(what) + " address \"" + address + "\": " + ec.message());
  tcp::endpoint ep(addr, hp->second);
  acceptor.emplace(io_);
  acceptor->open(ep.protocol(), ec);
  if (!ec) acceptor->set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor->bind(ep, ec);
  if (!ec) acceptor->listen(1024, ec);
  if (ec)
    return Error(ErrorCode::kUnavailable, "cannot listen on " + address + ": " + ec.message());
  auto bound = acceptor->local_endpoint();
  bound_address = bound.address().to_string() + ":" + std::to_string(bound.port());
  return ok_status();
}

Status Server::bind_unix() {
  if (config_.unix_path.empty()) return ok_status();
  const std::string& path = config_.unix_path;
  if (path.size() >= sizeof(sockaddr_un{}.sun_path))
    return invalid_argument("unix socket path is too long (" + std::to_string(path.size()) +
                            " bytes): " + path);
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) return invalid_argument(path + " exists and is not a socket");
    // A live server answers a connect; a stale socket file from a crash does not.
    stream_protocol::socket probe(io_);
    boost::system::error_code ec;
    probe.connect(stream_protocol::endpoint(path), ec);
    if (!ec) return Error(ErrorCode::kUnavailable, "another server is listening on " + path);
    ::unlink(path.c_str());
  }
  boost::system::error_code ec;
  unix_.emplace(io_);
  unix_->open(stream_protocol(), ec);
  if (!ec) unix_->bind(stream_protocol::endpoint(path), ec);
  if (!ec) unix_->listen(1024, ec);
  if (ec) {
    unix_.reset();
    return Error(ErrorCode::kUnavailable,
                 "cannot listen on unix socket " + path + ": " + ec.message());
  }
  ::chmod(path.c_str(), 0660);
  return ok_status();
}

Status Server::start(LockService& service, LoopHooks* hooks) {
  service_ = &service;
  if (hooks != nullptr) hooks_ = hooks;
  loop_.set_service(service);
  // Events made in one piece of the loop's work are told together once it is done
  // (event_bus.h); then the loop's turn ends as any other's.
  events::BusOptions bus;
  bus.later = [this] {
    boost::asio::post(io_, [this] {
      if (!events_) return;
      events_->tell();
      loop_.after_event();
    });
  };
  events_.emplace(service, clock_, std::move(bus));
  hub_.emplace(
      resp::ConnectionHub{io_,
                          loop_,
                          {service, info_, auth_, &metrics_, &scripts_, &pubsub_, &*events_},
                          {},
                          {},
                          &last_session_});
  http_hub_.emplace(http::HttpHub{io_,
                                  loop_,
                                  {service, auth_, view_, &metrics_, resp::command_table().size(),
                                   cors_.enabled() ? &cors_ : nullptr},
                                  &last_session_,
                                  {}});
  http_hub_->events = &*events_;
  hub_->active = &active_;
  http_hub_->active = &active_;
  std::signal(SIGPIPE, SIG_IGN);
  if (auto st = load_tls(); !st.ok()) return st;
  if (auto st = check_open_mode(); !st.ok()) return st;
  std::error_code fs_ec;
  fs::create_directories(config_.data_dir, fs_ec);
  if (fs_ec)
    return invalid_argument("cannot create data dir " + config_.data_dir + ": " + fs_ec.message());
  if (!config_.unix_path.empty())
    fs::create_directories(fs::path(config_.unix_path).parent_path(), fs_ec);
  if (auto st = bind_tcp(config_.listen, "listen", tcp_, resp_address_); !st.ok()) return st;
  info_.tcp_address = resp_address_;  // INFO's tcp_port, CONFIG GET port
  if (auto st = bind_unix(); !st.ok()) return st;
  if (auto st = bind_tcp(config_.http, "http", http_, http_address_); !st.ok()) return st;
  accept_tcp();
  accept_unix();
  accept_http();
  signals_.async_wait([this](const boost::system::error_code& ec, int sig) {
    if (ec) return;
    spdlog::info("signal {}: shutting down", sig);
    begin_shutdown();
  });
  wait_for_reload();
  loop_.after_event();  // arm the timer for leases recovered from the store
  std::string line = "holdfast ready";
  if (!resp_address_.empty()) line += " resp=" + resp_address_;
  if (unix_) line += " unix=" + config_.unix_path;
  if (!http_address_.empty()) line += " http=" + http_address_;
  line += std::string(" mode=") + (auth_ != nullptr ? "auth" : "open");
  if (tls_) line += " tls=on";
  // The one ready line, on stdout for scripts to wait for; the log (stderr) does not repeat it.
  std::cout << line << std::endl;
  // A systemd unit of Type=notify waits for this as scripts wait for the line (sd_notify.h).
  if (auto st = notify_service_manager("READY=1\nSTATUS=" + line); !st.ok())
    spdlog::warn("{}", st.error().message);
  return ok_status();
}

void Server::wait_for_reload() {
  reload_signal_.async_wait([this](const boost::system::error_code& ec, int) {
    if (ec || stopping_) return;
    if (reload_) reload_();
    reload_tls();
    wait_for_reload();
  });
}

Status Server::load_tls() {
  if (!config_.tls.enabled() || tls_) return ok_status();
  auto loaded = tls::load_server_context(config_.tls);
  if (!loaded.ok()) return std::move(loaded).error();
  use_tls(std::move(*loaded));
  return ok_status();
}

void Server::use_tls(tls::Loaded loaded) {
  tls_ = std::move(loaded.context);
  spdlog::info(
      "tls: the RESP and HTTP listeners speak TLS 1.2 and 1.3 only; certificate {}; "
      "client certificates: {}",
      loaded.certificate, tls_client_auth_name(config_.tls.client_auth));
  if (!loaded.warning.empty()) spdlog::warn("tls: {}", loaded.warning);
}

// New connections get the new context; open ones keep theirs. A file that does not load
// leaves the previous context in force.
void Server::reload_tls() {
  if (!tls_) return;
  auto loaded = tls::load_server_context(config_.tls);
  if (!loaded.ok()) {
    spdlog::error("SIGHUP: keeping the previous TLS certificate: {}", loaded.error().message);
    return;
  }
  tls_ = loaded->context;
  spdlog::info("SIGHUP: reloaded the TLS certificate, key and CA for new connections: {}",
               loaded->certificate);
  if (!loaded->warning.empty()) spdlog::warn("tls: {}", loaded->warning);
}

void Server::accept_tcp() {
  if (!tcp_ || stopping_) return;
  tcp_->async_accept([this](const boost::system::error_code& ec, tcp::socket socket) {
    if (stopping_) return;
    if (ec) {
      pause_accepting(ec, &Server::accept_tcp);
      return;
    }
    boost::system::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    adopt(resp::Connection::Socket(std::move(socket)), tls_);
    accept_tcp();
  });
}

void Server::accept_unix() {
  if (!unix_ || stopping_) return;
  unix_->async_accept([this](const boost::system::error_code& ec, stream_protocol::socket socket) {
    if (stopping_) return;
    if (ec) {
      pause_accepting(ec, &Server::accept_unix);
      return;
    }
    adopt(resp::Connection::Socket(std::move(socket)), nullptr);  // always plain
    accept_unix();
  });
}

void Server::accept_http() {
  if (!http_ || stopping_) return;
  http_->async_accept([this](const boost::system::error_code& ec, tcp::socket socket) {
    if (stopping_) return;
    if (ec) {
      pause_accepting(ec, &Server::accept_http);
      return;
    }
    boost::system::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    std::make_shared<http::Session>(*http_hub_, std::move(socket), tls_)->start();
    accept_http();
  });
}

// A failed accept leaves the connection in the listen queue, so an error such as running out of
// file descriptors comes straight back: retrying at once would spin the loop and flood the
// log. The listener waits 100 ms instead (queued clients wait with it), and the warning comes
// at most once a second, with the count of failures since the last one.
void Server::pause_accepting(const boost::system::error_code& ec, void (Server::*resume)()) {
  if (ec == boost::asio::error::operation_aborted || stopping_) return;
  ++accept_failures_;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_accept_warning_ >= std::chrono::seconds(1)) {
    spdlog::warn("accept: {}; accepting again in 100 ms ({} failed accepts since the last warning)",
                 ec.message(), accept_failures_);
    last_accept_warning_ = now;
    accept_failures_ = 0;
  }
  paused_listeners_.push_back(resume);
  if (paused_listeners_.size() > 1) return;  // the timer is already set
  accept_pause_.expires_after(std::chrono::milliseconds(100));
  accept_pause_.async_wait([this](const boost::system::error_code& wait_ec) {
    auto listeners = std::move(paused_listeners_);
    paused_listeners_.clear();
    if (wait_ec || stopping_) return;
    for (auto listener : listeners) (this->*listener)();
  });
}

void Server::adopt(resp::Connection::Socket socket, tls::ServerContextPtr tls) {
  auto conn = std::make_shared<resp::Connection>(*hub_, std::move(socket), std::move(tls));
  conn->start();
}

void Server::begin_shutdown() {
  if (stopping_) return;
  stopping_ = true;
  if (auto st = notify_service_manager("STOPPING=1"); !st.ok())
    spdlog::warn("{}", st.error().message);
  boost::system::error_code ignored;
  if (tcp_) tcp_->close(ignored);
  if (unix_) unix_->close(ignored);
  if (http_) http_->close(ignored);
  reload_signal_.cancel(ignored);
  accept_pause_.cancel();
  loop_.stop();
  std::vector<std::shared_ptr<resp::Connection>> live;
  for (auto& [id, weak] : hub_->live)
    if (auto c = weak.lock()) live.push_back(std::move(c));
  for (auto& c : live) c->shutdown();
  std::vector<std::shared_ptr<http::Session>> sessions;
  for (auto& [id, weak] : http_hub_->live)
    if (auto s = weak.lock()) sessions.push_back(std::move(s));
  for (auto& s : sessions) s->shutdown();
  // Waiting calls answer UNAVAILABLE now; their connections close once the replies are out.
  service_->shutdown();
  loop_.after_event();
  drain(std::chrono::steady_clock::now() + std::chrono::seconds(5));
}

// Waits until every connection has closed, or the deadline passes, then stops the loop.
void Server::drain(std::chrono::steady_clock::time_point deadline) {
  if (connection_count() == 0 || std::chrono::steady_clock::now() >= deadline) {
    io_.stop();
    return;
  }
  shutdown_deadline_.expires_after(std::chrono::milliseconds(10));
  shutdown_deadline_.async_wait([this, deadline](const boost::system::error_code& ec) {
    if (!ec) drain(deadline);
  });
}

void Server::run() {
  run_loop();
  events_.reset();  // it tells the service to stop its events: before the service goes
  spdlog::info("stopped");
}

// io_.run(), with two things between its rounds of work. Before the loop sleeps, the service
// finishes what it held back for that moment (the log's commit, written here as Redis writes
// its log before it sleeps, after a short wait for more to join it: store.h, commit_wait);
// and it may poll for up to the idle window first (idle_poll.h says why; a window of 0 never
// polls).
void Server::run_loop() {
  const auto now_us = &IdlePoll::steady_now;
  // Set after a wake-up from a sleep that a lazy write waited through: see below.
  bool skip_look = false;
  while (!io_.stopped()) {
    if (!std::exchange(skip_look, false) &&
        run_round(io_) > 0) {  // loop_round.h: a bounded round, not io_.poll()
      // Reads the clock only when a spell of polling has something to account for.
      if (idle_poll_.idle()) idle_poll_.found_work(now_us());
      hooks_->end_of_round(active_.count());
      continue;
    }
    if (io_.stopped()) break;
    if (const auto wait = hooks_->commit_wait(active_.count()); wait.count() > 0) {
      const auto until = std::chrono::steady_clock::now() + wait;
      if (wait <= kPolledCommitWait) {
        // The clients the last commit answered are coming back, within microseconds (store.h,
        // commit_wait): poll until the next of them or the end of the wait, then look again.
        // A sleep here would cost a wake-up for each of them (a context switch and, on a
        // virtual machine, an exit to the host), as much as the wait itself, and add it to
        // every request the commit carries.
        while (io_.poll_one() == 0 && !io_.stopped() && std::chrono::steady_clock::now() < until)
          sched_yield();  // a thread that wants this CPU (the client, the log writer) goes first
        continue;
      }
      // The oldest change is not due yet: sleep until work comes or it is, then look again.
      // The end stays put while the change it counts from does: the timer is set again only
      // when it moves.
      if (!commit_wait_until_ || until < *commit_wait_until_ - kCommitWaitSlack ||
          until > *commit_wait_until_ + kCommitWaitSlack) {
        commit_wait_until_ = until;
        commit_wait_.expires_at(until);
        commit_wait_.async_wait([this](const boost::system::error_code& ec) {
          if (!ec) commit_wait_until_.reset();
        });
      }
      // With a lazy write (fsync never) no reply waits for the commit, so what this
      // wake-up brought need not be taken in a round: run_one() runs the handlers it queued
      // one by one, without a look at the sockets between them, and sleeps again (a blocking
      // epoll_wait) once they are done. A round would start with a non-blocking epoll_wait,
      // which after most wake-ups (one ready socket) finds nothing: one system call fewer per
      // wake-up, as Redis sleeps once per turn. With fsync always the round stays, so that a
      // commit never leaves behind changes that came with the same wake-up.
      const bool ran = io_.run_one() > 0;
      skip_look = ran && lazy_log_;
      continue;
    }
    if (hooks_->before_sleep()) {
      loop_.after_event();  // the replies it made durable
      continue;
    }
    if (idle_poll_.max() > 0 && idle_poll_.keep_polling(now_us())) {
      // Poll only with a CPU nobody else wants: any other runnable thread on this CPU (a
      // client on the same machine, another server, the log writer) goes first.
      sched_yield();
    } else {
      io_.run_one();
      if (idle_poll_.max() > 0) idle_poll_.woke(now_us());
    }
  }
}

}  // namespace holdfast
