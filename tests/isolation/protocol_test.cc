// The runner/worker protocol (isolation/protocol.h): payload coding, framing over a real socket
// pair, malformed input as a failure (never UB), deadlines and aborts.
#include "isolation/protocol.h"

#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include <gtest/gtest.h>

namespace litmus::isolation {
namespace {

TEST(Protocol, EncodesAndDecodes) {
  Encoder e;
  e.Put<int32_t>(-7).Put<uint64_t>(1ull << 40).PutString("name").PutVector(std::vector<int64_t>{1, -2, 3});
  e.Put<double>(0.5);
  Decoder d(e.bytes());
  EXPECT_EQ(d.Get<int32_t>(), -7);
  EXPECT_EQ(d.Get<uint64_t>(), 1ull << 40);
  EXPECT_EQ(d.GetString(), "name");
  EXPECT_EQ(d.GetVector<int64_t>(), (std::vector<int64_t>{1, -2, 3}));
  EXPECT_EQ(d.Get<double>(), 0.5);
  EXPECT_FALSE(d.failed());
  EXPECT_TRUE(d.at_end());
}

TEST(Protocol, TruncatedPayloadFailsWithoutReadingPastTheEnd) {
  Encoder e;
  e.PutString("a long enough string");
  const std::string bytes = e.bytes();
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    Decoder d(std::string_view(bytes).substr(0, cut));
    EXPECT_TRUE(d.GetString().size() < 21);
    EXPECT_TRUE(d.failed()) << cut;
  }
  // A size larger than what follows.
  Encoder huge;
  huge.Put<uint64_t>(~uint64_t{0});
  Decoder d(huge.bytes());
  EXPECT_TRUE(d.GetBytes().empty());
  EXPECT_TRUE(d.failed());
  // A vector whose byte size is not a multiple of the element size.
  Encoder odd;
  odd.PutString("12345");
  Decoder v(odd.bytes());
  EXPECT_TRUE(v.GetVector<int64_t>().empty());
  EXPECT_TRUE(v.failed());
}

struct Pair {
  Pair() {
    int fds[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    a = std::make_unique<Channel>(fds[0]);
    b = std::make_unique<Channel>(fds[1]);
  }
  std::unique_ptr<Channel> a, b;
};

TEST(Protocol, FramesCrossASocketWhole) {
  Pair p;
  const std::string big(3 << 20, 'x');  // larger than the socket buffer: needs the reader
  std::thread writer([&] {
    EXPECT_EQ(p.a->Send(MessageType::kLog, "small"), Channel::Failure::kNone);
    EXPECT_EQ(p.a->Send(MessageType::kQuery, big), Channel::Failure::kNone);
    EXPECT_EQ(p.a->Send(MessageType::kDestroy, {}), Channel::Failure::kNone);
  });
  Message m;
  ASSERT_EQ(p.b->Receive(&m), Channel::Failure::kNone);
  EXPECT_EQ(m.type, MessageType::kLog);
  EXPECT_EQ(m.payload, "small");
  ASSERT_EQ(p.b->Receive(&m), Channel::Failure::kNone);
  EXPECT_EQ(m.type, MessageType::kQuery);
  EXPECT_EQ(m.payload, big);
  ASSERT_EQ(p.b->Receive(&m), Channel::Failure::kNone);
  EXPECT_EQ(m.type, MessageType::kDestroy);
  EXPECT_TRUE(m.payload.empty());
  writer.join();
}

TEST(Protocol, ClosedPeerTimeoutAbortAndGarbage) {
  {
    Pair p;
    p.a.reset();
    Message m;
    EXPECT_EQ(p.b->Receive(&m), Channel::Failure::kClosed);
    EXPECT_EQ(p.b->Send(MessageType::kLog, "x"), Channel::Failure::kClosed);  // no SIGPIPE
  }
  {
    Pair p;
    Message m;
    Channel::Limits limits{std::chrono::steady_clock::now() + std::chrono::milliseconds(50), nullptr};
    EXPECT_EQ(p.b->Receive(&m, limits), Channel::Failure::kTimedOut);
    Channel::Limits abort{std::nullopt, [] { return true; }};
    EXPECT_EQ(p.b->Receive(&m, abort), Channel::Failure::kAborted);
  }
  {
    Pair p;
    const char garbage[16] = {1, 0, 0, 0, 7, 7, 7, 7, 0, 0, 0, 0, 0, 0, 0, 0};  // reserved != 0
    ASSERT_EQ(write(p.a->fd(), garbage, sizeof(garbage)), 16);
    Message m;
    EXPECT_EQ(p.b->Receive(&m), Channel::Failure::kProtocol);
  }
  {
    Pair p;
    const uint32_t header[4] = {1, 0, 0xffffffffu, 0xffffffffu};  // length beyond the limit
    ASSERT_EQ(write(p.a->fd(), header, sizeof(header)), 16);
    Message m;
    EXPECT_EQ(p.b->Receive(&m), Channel::Failure::kProtocol);
  }
}

}  // namespace
}  // namespace litmus::isolation
