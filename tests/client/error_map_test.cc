// RESP error lines to typed exceptions: codes, details (plain and JSON-quoted), retry_after.
#include <gtest/gtest.h>

#include "client/error_map.h"
#include "holdfast/errors.h"

namespace holdfast::client_internal {
namespace {

TEST(ErrorLine, SplitsCodeMessageAndTrailingDetails) {
  auto e = parse_error_line("LOCK_TIMEOUT no grant within the timeout key=jobs:1 timeoutMs=300");
  EXPECT_EQ(e.code, "LOCK_TIMEOUT");
  EXPECT_EQ(e.message, "no grant within the timeout");
  EXPECT_EQ(e.details.at("key"), "jobs:1");
  EXPECT_EQ(e.details.at("timeoutMs"), "300");
}

TEST(ErrorLine, JsonQuotedDetailValues) {
  auto e = parse_error_line(R"(LOCK_TIMEOUT no grant key="a b=c \"q\"\u0001" timeoutMs=5)");
  EXPECT_EQ(e.details.at("key"), std::string("a b=c \"q\"\x01"));
  EXPECT_EQ(e.details.at("timeoutMs"), "5");
}

TEST(ErrorLine, AnEqualsSignInsideTheMessageStaysInTheMessage) {
  auto e = parse_error_line("INVALID_ARGUMENT use TTL=ms not seconds please");
  EXPECT_EQ(e.message, "use TTL=ms not seconds please");
  EXPECT_TRUE(e.details.empty());
}

TEST(ErrorLine, CodeOnly) {
  auto e = parse_error_line("UNAVAILABLE");
  EXPECT_EQ(e.code, "UNAVAILABLE");
  EXPECT_EQ(e.message, "");
}

template <class E>
E thrown(std::string_view line) {
  try {
    throw_server_error(line);
  } catch (const E& e) {
    return e;
  } catch (const std::exception& other) {
    ADD_FAILURE() << "wrong exception type for " << line << ": " << other.what();
  }
  throw std::logic_error("unreachable");
}

TEST(ErrorMap, LockTimeoutCarriesKeyAndTimeout) {
  auto e =
      thrown<LockTimeoutError>("LOCK_TIMEOUT no grant within the timeout key=jobs:1 timeoutMs=300");
  EXPECT_EQ(e.code(), "LOCK_TIMEOUT");
  EXPECT_EQ(e.key(), "jobs:1");
  EXPECT_EQ(e.timeout(), std::chrono::milliseconds(300));
}

TEST(ErrorMap, RateLimitedCarriesRetryAfter) {
  auto e = thrown<RateLimitedError>("RATE_LIMITED over the acquire cap retryAfterMs=1500");
  EXPECT_EQ(e.code(), "RATE_LIMITED");
  EXPECT_EQ(e.retry_after(), std::chrono::milliseconds(1500));
  EXPECT_EQ(e.details().at("retryAfterMs"), "1500");
}

TEST(ErrorMap, RedisAuthenticationCodesAreUnauthenticated) {
  auto before = thrown<UnauthenticatedError>("NOAUTH Authentication required");
  EXPECT_EQ(before.code(), "UNAUTHENTICATED");
  EXPECT_STREQ(before.what(), "UNAUTHENTICATED NOAUTH Authentication required");
  auto wrong = thrown<UnauthenticatedError>("WRONGPASS unknown credentials");
  EXPECT_EQ(wrong.code(), "UNAUTHENTICATED");
  EXPECT_STREQ(wrong.what(), "UNAUTHENTICATED WRONGPASS unknown credentials");
}

TEST(ErrorMap, EveryCodeOfTheSpecHasItsType) {
  thrown<AccessDeniedError>("LOCK_ACCESS_DENIED denied");
  thrown<ForbiddenError>("FORBIDDEN admin only");
  thrown<UnauthenticatedError>("UNAUTHENTICATED unknown credentials");
  thrown<InvalidArgumentError>("INVALID_ARGUMENT TTL must be positive ttlMs=0");
  thrown<LockHeldError>("LOCK_HELD held key=k");
  thrown<NotHolderError>("LOCK_NOT_HOLDER no key=k");
  thrown<RulesetConflictError>("RULESET_CONFLICT another");
  thrown<UnavailableError>("UNAVAILABLE shutting down");
  auto full = thrown<StoreUnavailableError>(
      "STORE_UNAVAILABLE the write-ahead log cannot be written retryAfterMs=1000");
  EXPECT_EQ(full.code(), "STORE_UNAVAILABLE");
  EXPECT_EQ(full.details().at("retryAfterMs"), "1000");
  auto e = thrown<Error>("ERR unknown command 'X'");
  EXPECT_EQ(e.code(), "ERR");
  EXPECT_STREQ(e.what(), "ERR unknown command 'X'");
}

}  // namespace
}  // namespace holdfast::client_internal
