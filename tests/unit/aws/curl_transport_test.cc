// The curl transport against a LocalHttpServer: methods, headers and bodies as sent, HEAD, kept
// connections across requests and threads, and Unavailable (not a crash or a hang) for refused
// or dropped connections and timeouts.
#include <gtest/gtest.h>

#include <mutex>
#include <thread>

#include "litmus/aws/http.h"
#include "unit/aws/local_http_server.h"

namespace litmus::aws {
namespace {

using testing::LocalHttpServer;
using testing::ServedRequest;
using testing::ServedResponse;

TEST(CurlTransport, SendsMethodHeadersAndBody) {
  std::mutex mu;
  std::vector<ServedRequest> seen;
  LocalHttpServer server([&](const ServedRequest& request) {
    std::lock_guard<std::mutex> lock(mu);
    seen.push_back(request);
    return ServedResponse{.status = request.method == "PUT" ? 200 : 206,
                          .headers = {{"X-Answer", " yes "}, {"ETag", "\"abc\""}},
                          .body = "0123456789",
                          .delay = {},
                          .drop_connection = false};
  });
  auto transport = NewCurlTransport();
  StatusOr<HttpResponse> got = transport->Send(
      {.method = "GET", .url = server.url() + "/b/k?x=1", .headers = {{"Range", "bytes=0-9"}, {"Host", "example:1"}},
       .body = ""});
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->status, 206);
  EXPECT_EQ(got->body, "0123456789");
  EXPECT_EQ(got->Header("x-answer"), "yes");
  EXPECT_EQ(got->Header("ETAG"), "\"abc\"");

  got = transport->Send({.method = "PUT", .url = server.url() + "/b/k", .headers = {}, .body = std::string("a\0b", 3)});
  ASSERT_TRUE(got.ok());
  got = transport->Send({.method = "HEAD", .url = server.url() + "/b/k", .headers = {}, .body = ""});
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->body, "");
  EXPECT_EQ(got->Header("content-length"), "10");

  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].method, "GET");
  EXPECT_EQ(seen[0].target, "/b/k?x=1");
  EXPECT_EQ(seen[0].Header("range"), "bytes=0-9");
  EXPECT_EQ(seen[0].Header("host"), "example:1");  // a signed Host is sent as given
  EXPECT_EQ(seen[0].Header("expect"), "");
  EXPECT_EQ(seen[1].method, "PUT");
  EXPECT_EQ(seen[1].body, std::string("a\0b", 3));
  EXPECT_EQ(seen[1].Header("content-type"), "");  // curl adds none: it would not be signed
  EXPECT_EQ(seen[2].method, "HEAD");
}

// S3 keys may hold dot segments ("a/./b/../c"); the path must reach the server as it was signed.
TEST(CurlTransport, SendsThePathAsGiven) {
  std::mutex mu;
  std::vector<std::string> targets;
  LocalHttpServer server([&](const ServedRequest& request) {
    std::lock_guard<std::mutex> lock(mu);
    targets.push_back(request.target);
    return ServedResponse{.status = 200, .headers = {}, .body = "", .delay = {}, .drop_connection = false};
  });
  auto transport = NewCurlTransport();
  const std::string path = "/b/a/./b/../c//d%2B%20%C3%A9";
  ASSERT_TRUE(transport->Send({.method = "GET", .url = server.url() + path, .headers = {}, .body = ""}).ok());
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(targets, std::vector<std::string>{path});
}

TEST(CurlTransport, RangedAnswersGoStraightIntoTheCallersBuffer) {
  LocalHttpServer server([](const ServedRequest& request) {
    const int status = request.target == "/whole" ? 200 : 206;
    return ServedResponse{.status = status, .headers = {{"Content-Range", "bytes 0-9/10"}},
                          .body = request.target == "/long" ? "0123456789ABC" : "0123456789", .delay = {},
                          .drop_connection = false};
  });
  auto transport = NewCurlTransport();
  std::string buffer(10, '.');
  const std::span<std::byte> out = std::as_writable_bytes(std::span(buffer));
  StatusOr<HttpResponse> ranged =
      transport->Send({.method = "GET", .url = server.url() + "/ranged", .headers = {}, .body = "", .response_buffer = out});
  ASSERT_TRUE(ranged.ok()) << ranged.status().ToString();
  EXPECT_EQ(ranged->buffered_bytes, 10u);
  EXPECT_EQ(ranged->body, "");
  EXPECT_EQ(buffer, "0123456789");

  // A 200 (the server ignored the range) keeps its body in HttpResponse::body.
  buffer.assign(10, '.');
  StatusOr<HttpResponse> whole =
      transport->Send({.method = "GET", .url = server.url() + "/whole", .headers = {}, .body = "", .response_buffer = out});
  ASSERT_TRUE(whole.ok());
  EXPECT_FALSE(whole->buffered_bytes.has_value());
  EXPECT_EQ(whole->body, "0123456789");
  EXPECT_EQ(buffer, "..........");

  // More bytes than the buffer holds is an error, never an overrun.
  StatusOr<HttpResponse> too_long =
      transport->Send({.method = "GET", .url = server.url() + "/long", .headers = {}, .body = "", .response_buffer = out});
  EXPECT_EQ(too_long.status().code(), StatusCode::kUnavailable);
}

TEST(CurlTransport, ReusesConnections) {
  LocalHttpServer server([](const ServedRequest&) {
    return ServedResponse{.status = 200, .headers = {}, .body = "x", .delay = {}, .drop_connection = false};
  });
  auto transport = NewCurlTransport();
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(transport->Send({.method = "GET", .url = server.url() + "/", .headers = {}, .body = ""}).ok());
  }
  EXPECT_EQ(server.requests_served(), 20);
  EXPECT_EQ(server.connections_accepted(), 1);

  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 25; ++i) {
        EXPECT_TRUE(transport->Send({.method = "GET", .url = server.url() + "/", .headers = {}, .body = ""}).ok());
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(server.requests_served(), 120);
  EXPECT_LE(server.connections_accepted(), 5) << "at most one connection per concurrent request";
}

TEST(CurlTransport, ConnectionFailuresAreUnavailable) {
  int port = 0;
  {
    LocalHttpServer gone([](const ServedRequest&) { return ServedResponse{}; });
    port = gone.port();
  }
  auto transport = NewCurlTransport();
  StatusOr<HttpResponse> refused =
      transport->Send({.method = "GET", .url = "http://127.0.0.1:" + std::to_string(port) + "/", .headers = {}, .body = ""});
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable);

  LocalHttpServer dropping([](const ServedRequest&) {
    return ServedResponse{.status = 200, .headers = {}, .body = "", .delay = {}, .drop_connection = true};
  });
  StatusOr<HttpResponse> dropped = transport->Send({.method = "GET", .url = dropping.url() + "/", .headers = {}, .body = ""});
  EXPECT_EQ(dropped.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(dropped.status().message().find(dropping.url()), std::string::npos) << dropped.status().message();

  LocalHttpServer slow([](const ServedRequest&) {
    return ServedResponse{.status = 200, .headers = {}, .body = "late", .delay = std::chrono::milliseconds(1500),
                          .drop_connection = false};
  });
  auto impatient = NewCurlTransport({.connect_timeout = std::chrono::milliseconds(500),
                                     .request_timeout = std::chrono::milliseconds(300),
                                     .low_speed_time = std::chrono::seconds(1)});
  StatusOr<HttpResponse> timed_out = impatient->Send({.method = "GET", .url = slow.url() + "/", .headers = {}, .body = ""});
  EXPECT_EQ(timed_out.status().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace litmus::aws
