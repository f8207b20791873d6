// ForkedEncoding: a snapshot's state encoded in a child process and read back piece by piece.
#include "store/wal/forked_encoder.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <new>
#include <thread>

#include "test_support.h"

namespace holdfast::wal {
namespace {

using testing::make_hold;

DurableState sample_state() {
  DurableState state;
  state.last_token = 40;
  for (std::uint64_t t = 1; t <= 30; ++t)
    state.holds.push_back(make_hold("k" + std::to_string(t), t));
  // Left out of the snapshot, but its token counts.
  state.holds.push_back(make_hold("session", 35, testing::kStart + 60'000, Scope::kSession));
  state.rule_set = RuleSetPut{"locks", "[[rule]]\nallow = true\n"};
  return state;
}

// Reads the stream as the snapshot writer does, a piece at a time, into one state.
Result<EncodedState> read_all(StateStream& stream, int* pieces = nullptr) {
  Result<EncodedState> state = stream.head();
  if (!state) return state;
  for (;;) {
    Result<std::string_view> piece = stream.holds();
    if (!piece) return std::move(piece).error();
    if (piece->empty()) break;
    state->holds += *piece;
    if (pieces != nullptr) ++*pieces;
  }
  if (Status s = stream.finish(); !s) return std::move(s).error();
  return state;
}

// Reads the stream to its end and expects it to fail because the child exited with `status`.
void expect_child_exited(ForkedEncoding& child, int status) {
  Result<EncodedState> got = read_all(child);
  ASSERT_FALSE(got.ok());
  EXPECT_TRUE(child.failed());
  const std::string want = "exited with status " + std::to_string(status);
  EXPECT_NE(got.error().message.find(want), std::string::npos) << got.error().message;
}

EncodedState encode_here(const DurableState& state, std::uint64_t last_token) {
  SnapshotEncoder encoder;
  hand_over(state, encoder);
  encoder.last_token(last_token);
  return encoder.take();
}

TEST(ForkedEncoding, TheChildsStateIsTheStateEncodedInProcess) {
  const DurableState state = sample_state();
  Result<ForkedEncoding> child =
      ForkedEncoding::start([&](StateSink& sink) { hand_over(state, sink); }, 77);
  ASSERT_TRUE(child.ok()) << child.error().message;
  Result<EncodedState> got = read_all(*child);
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_FALSE(child->failed());
  const EncodedState want = encode_here(state, 77);
  EXPECT_EQ(got->last_token, 77u);
  EXPECT_EQ(got->hold_count, 30u);
  EXPECT_EQ(got->hold_count, want.hold_count);
  EXPECT_EQ(got->holds, want.holds);
  ASSERT_TRUE(got->rule_set.has_value());
  EXPECT_EQ(got->rule_set->name, "locks");
  EXPECT_EQ(got->rule_set->toml, want.rule_set->toml);
}

TEST(ForkedEncoding, SeesTheStateAsItWasAtTheFork) {
  DurableState state = sample_state();
  Result<ForkedEncoding> child =
      ForkedEncoding::start([&](StateSink& sink) { hand_over(state, sink); }, 0);
  ASSERT_TRUE(child.ok());
  state.holds.clear();  // the parent goes on changing its table
  state.rule_set.reset();
  Result<EncodedState> got = read_all(*child);
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(got->hold_count, 30u);
  EXPECT_TRUE(got->rule_set.has_value());
}

TEST(ForkedEncoding, AChildThatDiesIsAnErrorNotAState) {
  Result<ForkedEncoding> child = ForkedEncoding::start([](StateSink&) { ::_exit(3); }, 0);
  ASSERT_TRUE(child.ok());
  expect_child_exited(*child, 3);
}

TEST(ForkedEncoding, AnExceptionInTheChildEndsTheChild) {
  Result<ForkedEncoding> child =
      ForkedEncoding::start([](StateSink&) { throw std::bad_alloc(); }, 0);
  ASSERT_TRUE(child.ok());  // only the parent gets here
  expect_child_exited(*child, 2);
}

TEST(ForkedEncoding, TheHoldsComeInPiecesOfAboutOneMiB) {
  DurableState state;
  for (std::uint64_t t = 1; t <= 100'000; ++t)
    state.holds.push_back(make_hold("key/" + std::to_string(t), t));
  Result<ForkedEncoding> child =
      ForkedEncoding::start([&](StateSink& sink) { hand_over(state, sink); }, 0);
  ASSERT_TRUE(child.ok());
  int pieces = 0;
  Result<EncodedState> got = read_all(*child, &pieces);
  ASSERT_TRUE(got.ok()) << got.error().message;
  const EncodedState want = encode_here(state, 0);
  EXPECT_EQ(got->hold_count, 100'000u);
  EXPECT_EQ(got->holds, want.holds);
  EXPECT_GE(pieces, static_cast<int>(want.holds.size() >> 20));
  EXPECT_LE(pieces, static_cast<int>(want.holds.size() >> 20) + 1);
}

TEST(ForkedEncoding, FinishingBeforeTheLastPieceIsAnError) {
  const DurableState state = sample_state();
  Result<ForkedEncoding> child =
      ForkedEncoding::start([&](StateSink& sink) { hand_over(state, sink); }, 0);
  ASSERT_TRUE(child.ok());
  ASSERT_TRUE(child->head().ok());
  EXPECT_FALSE(child->finish().ok());
  EXPECT_TRUE(child->failed());
}

TEST(ForkedEncoding, PassesThatDisagreeFailTheChild) {
  // A source that hands over one hold more the second time: the head would lie.
  int calls = 0;
  Result<ForkedEncoding> child = ForkedEncoding::start(
      [&](StateSink& sink) {
        DurableState state = sample_state();
        if (++calls == 2) state.holds.push_back(make_hold("late", 39));
        hand_over(state, sink);
      },
      0);
  ASSERT_TRUE(child.ok());
  expect_child_exited(*child, 1);
}

TEST(ForkedEncoding, DroppedBeforeFinishKillsAndReapsTheChild) {
  const auto start = std::chrono::steady_clock::now();
  {
    Result<ForkedEncoding> child = ForkedEncoding::start([](StateSink&) { ::pause(); }, 0);
    ASSERT_TRUE(child.ok());
  }  // a child that would never finish
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

// Whether process `pid` has ended (gone, or a zombie nobody reaped yet).
bool ended(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  const std::size_t close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

TEST(ForkedEncoding, TheChildDiesWithTheServer) {
  char path[] = "/tmp/holdfast-forked-pid-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ::close(fd);
  const std::string pid_file = path;
  // A "server" that starts an encoding that never finishes, then dies without cleaning up.
  const pid_t server = ::fork();
  ASSERT_GE(server, 0);
  if (server == 0) {
    Result<ForkedEncoding> child = ForkedEncoding::start(
        [&](StateSink&) {
          std::ofstream(pid_file + ".new") << ::getpid();
          ::rename((pid_file + ".new").c_str(), pid_file.c_str());
          ::pause();
        },
        0);
    if (!child.ok()) ::_exit(1);
    for (std::uintmax_t size = 0; size == 0; size = std::filesystem::file_size(pid_file))
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ::_exit(0);  // as a kill -9 would: no destructor kills the child
  }
  int status = 0;
  ASSERT_EQ(::waitpid(server, &status, 0), server);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  pid_t encoder = 0;
  std::ifstream(pid_file) >> encoder;
  ::unlink(pid_file.c_str());
  ASSERT_GT(encoder, 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!ended(encoder) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const bool gone = ended(encoder);
  if (!gone) ::kill(encoder, SIGKILL);
  EXPECT_TRUE(gone) << "the encoder child outlived the server that forked it";
}

TEST(ForkedEncoding, TheChildDoesNotKeepTheDataDirLock) {
  char path[] = "/tmp/holdfast-forked-lock-XXXXXX";
  const int held = ::mkstemp(path);
  ASSERT_GE(held, 0);
  ASSERT_EQ(::flock(held, LOCK_EX | LOCK_NB), 0);
  // A child that stays alive (as one encoding a large table would) while the parent dies.
  Result<ForkedEncoding> child = ForkedEncoding::start([](StateSink&) { ::pause(); }, 0);
  ASSERT_TRUE(child.ok());
  ::close(held);  // the parent's reference to the locked file goes
  const int next = ::open(path, O_RDWR);
  ASSERT_GE(next, 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  bool locked = false;
  while (!locked && std::chrono::steady_clock::now() < deadline) {
    locked = ::flock(next, LOCK_EX | LOCK_NB) == 0;
    if (!locked) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_TRUE(locked) << "the child still holds the lock a restarted server needs";
  ::close(next);
  ::unlink(path);
}

}  // namespace
}  // namespace holdfast::wal
