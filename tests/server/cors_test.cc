#include "server/http/cors.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace holdfast::http::cors {
namespace {

const Policy kOff{};
const Policy kApp{{"https://app.example.com", "http://localhost:5173"}};
const Policy kAny{{"*"}};

std::string header(const Headers& headers, std::string_view name) {
  for (const auto& [n, v] : headers)
    if (n == name) return v;
  return "(absent)";
}

std::string error_code(const Response& r) {
  return std::string(boost::json::parse(r.body).as_object().at("errorCode").as_string());
}

TEST(Cors, OffByDefaultAddsNothingAndAnswersNoPreflight) {
  EXPECT_TRUE(response_headers(kOff, "https://app.example.com").empty());
  EXPECT_FALSE(preflight(kOff, "OPTIONS", "https://app.example.com", "POST", "content-type"));
}

TEST(Cors, AnAllowedOriginIsNamedBackWithVary) {
  auto h = response_headers(kApp, "http://localhost:5173");
  EXPECT_EQ(header(h, "Access-Control-Allow-Origin"), "http://localhost:5173");
  EXPECT_EQ(header(h, "Vary"), "Origin");
  EXPECT_EQ(header(h, "Access-Control-Expose-Headers"), "Retry-After, WWW-Authenticate");
  EXPECT_EQ(header(h, "Access-Control-Allow-Credentials"), "(absent)");
}

TEST(Cors, AnotherOriginOrNoneGetsOnlyVary) {
  auto other = response_headers(kApp, "https://evil.example.com");
  EXPECT_EQ(header(other, "Access-Control-Allow-Origin"), "(absent)");
  EXPECT_EQ(header(other, "Vary"), "Origin");
  auto none = response_headers(kApp, "");
  EXPECT_EQ(header(none, "Access-Control-Allow-Origin"), "(absent)");
  // A prefix or a different port is a different origin.
  EXPECT_EQ(header(response_headers(kApp, "https://app.example.com.evil.net"),
                   "Access-Control-Allow-Origin"),
            "(absent)");
  EXPECT_EQ(header(response_headers(kApp, "http://localhost:5174"), "Access-Control-Allow-Origin"),
            "(absent)");
}

TEST(Cors, WildcardAllowsEveryOriginWithAStar) {
  auto h = response_headers(kAny, "https://anything.example");
  EXPECT_EQ(header(h, "Access-Control-Allow-Origin"), "*");
  EXPECT_EQ(header(h, "Vary"), "(absent)");
  EXPECT_EQ(header(response_headers(kAny, ""), "Access-Control-Allow-Origin"), "(absent)");
}

TEST(Cors, PreflightFromAnAllowedOriginIs204WithMethodsAndHeaders) {
  auto r =
      preflight(kApp, "OPTIONS", "https://app.example.com", "POST", "Content-Type, authorization");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 204);
  EXPECT_TRUE(r->body.empty());
  EXPECT_TRUE(r->content_type.empty());
  EXPECT_EQ(header(r->headers, "Access-Control-Allow-Methods"), "GET, HEAD, POST, PUT, DELETE");
  EXPECT_EQ(header(r->headers, "Access-Control-Allow-Headers"), "Authorization, Content-Type");
  EXPECT_EQ(header(r->headers, "Access-Control-Max-Age"), "600");
}

TEST(Cors, PreflightWithoutRequestedHeadersIsAllowed) {
  auto r = preflight(kApp, "OPTIONS", "https://app.example.com", "GET", "");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 204);
}

TEST(Cors, PreflightFromAnotherOriginIsRefusedNamingIt) {
  auto r = preflight(kApp, "OPTIONS", "https://evil.example.com", "POST", "");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 403);
  EXPECT_EQ(error_code(*r), "FORBIDDEN");
  EXPECT_NE(r->body.find("https://evil.example.com"), std::string::npos);
}

TEST(Cors, PreflightForAMethodOrHeaderTheApiDoesNotTakeIsRefused) {
  auto patch = preflight(kApp, "OPTIONS", "https://app.example.com", "PATCH", "");
  ASSERT_TRUE(patch);
  EXPECT_EQ(patch->status, 403);
  EXPECT_NE(patch->body.find("PATCH"), std::string::npos);
  auto partial = preflight(kApp, "OPTIONS", "https://app.example.com", "ET", "");
  ASSERT_TRUE(partial);
  EXPECT_EQ(partial->status, 403);
  auto header_refused =
      preflight(kApp, "OPTIONS", "https://app.example.com", "POST", "content-type, X-Trace");
  ASSERT_TRUE(header_refused);
  EXPECT_EQ(header_refused->status, 403);
  EXPECT_NE(header_refused->body.find("x-trace"), std::string::npos);
}

TEST(Cors, OptionsThatIsNotAPreflightIsLeftToTheRoutes) {
  EXPECT_FALSE(preflight(kApp, "OPTIONS", "https://app.example.com", "", ""));
  EXPECT_FALSE(preflight(kApp, "OPTIONS", "", "POST", ""));
  EXPECT_FALSE(preflight(kApp, "POST", "https://app.example.com", "POST", ""));
}

TEST(Cors, AChangeFromAPageOfAnotherOriginIsRefusedWhetherCorsIsOnOrOff) {
  for (const Policy* p : {&kOff, &kApp}) {
    auto refused = cross_origin_refusal(*p, "POST", "https://evil.example.com");
    ASSERT_TRUE(refused);
    EXPECT_EQ(refused->status, 403);
    EXPECT_EQ(error_code(*refused), "FORBIDDEN");
    EXPECT_NE(refused->body.find("https://evil.example.com"), std::string::npos);
    EXPECT_TRUE(cross_origin_refusal(*p, "DELETE", "null"));
    // Reads, preflights, and requests that no browser sent are left alone.
    EXPECT_FALSE(cross_origin_refusal(*p, "GET", "https://evil.example.com"));
    EXPECT_FALSE(cross_origin_refusal(*p, "OPTIONS", "https://evil.example.com"));
    EXPECT_FALSE(cross_origin_refusal(*p, "POST", ""));
  }
  EXPECT_FALSE(cross_origin_refusal(kApp, "POST", "http://localhost:5173"));
  EXPECT_FALSE(cross_origin_refusal(kAny, "PUT", "https://anywhere.example"));
}

TEST(Cors, ConfiguredEntriesMustBeOriginsOrAStar) {
  EXPECT_FALSE(origin_problem("*"));
  EXPECT_FALSE(origin_problem("https://app.example.com"));
  EXPECT_FALSE(origin_problem("http://127.0.0.1:8080"));
  EXPECT_TRUE(origin_problem("app.example.com"));
  EXPECT_TRUE(origin_problem("https://app.example.com/"));
  EXPECT_TRUE(origin_problem("https://app.example.com/path"));
  EXPECT_TRUE(origin_problem("https://"));
  EXPECT_TRUE(origin_problem("null"));
  EXPECT_TRUE(origin_problem("https://App.example.com"));
}

}  // namespace
}  // namespace holdfast::http::cors
