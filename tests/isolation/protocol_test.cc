// The runner/worker protocol (isolation/protocol.h): payload coding, framing over a real socket
// pair, malformed input as a failure (never UB), deadlines and aborts.
#include "isolation/protocol.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

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

// The receiving end takes what the socket holds at once: frames that arrive together, frames
// that arrive a byte at a time, and payloads at and around the size of its buffer (64 KiB) all
// come out whole and in order.
TEST(Protocol, FramesArrivingTogetherOrInPiecesComeOutWholeAndInOrder) {
  Pair p;
  // Sizes around the receive buffer's 64 KiB: below, at, just above, and well above.
  const std::vector<size_t> sizes = {0, 1, 15, 16, 4096, 65535 - 16, 65536 - 16, 65535, 65536, 65537, 200000};
  std::string stream;  // every frame back to back, written by one thread in odd-sized pieces
  std::vector<std::string> payloads;
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::string payload(sizes[i], '\0');
    for (size_t j = 0; j < payload.size(); ++j) payload[j] = static_cast<char>('a' + (i * 7 + j) % 26);
    const uint64_t header[2] = {static_cast<uint64_t>(MessageType::kQuery), payload.size()};
    stream.append(reinterpret_cast<const char*>(header), sizeof(header));
    stream += payload;
    payloads.push_back(std::move(payload));
  }
  std::thread writer([&] {
    // First a byte at a time (the reader sees partial headers and payloads), then the rest in
    // pieces of 7,000 bytes (several frames per piece, frames split across pieces).
    size_t at = 0;
    for (; at < 100; ++at) {
      ASSERT_EQ(write(p.a->fd(), stream.data() + at, 1), 1);
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    while (at < stream.size()) {
      const size_t n = std::min<size_t>(7000, stream.size() - at);
      size_t done = 0;
      while (done < n) {
        const ssize_t w = write(p.a->fd(), stream.data() + at + done, n - done);
        ASSERT_GT(w, 0);
        done += static_cast<size_t>(w);
      }
      at += n;
    }
    EXPECT_EQ(p.a->Send(MessageType::kDestroy, {}), Channel::Failure::kNone);
  });
  for (size_t i = 0; i < payloads.size(); ++i) {
    Message m;
    ASSERT_EQ(p.b->Receive(&m), Channel::Failure::kNone) << "frame " << i;
    EXPECT_EQ(m.type, MessageType::kQuery) << "frame " << i;
    EXPECT_EQ(m.payload, payloads[i]) << "frame " << i << " (" << sizes[i] << " bytes)";
  }
  Message last;
  ASSERT_EQ(p.b->Receive(&last), Channel::Failure::kNone);
  EXPECT_EQ(last.type, MessageType::kDestroy);
  writer.join();
  // The peer gone after its last frame: the next receive says so.
  p.a.reset();
  EXPECT_EQ(p.b->Receive(&last), Channel::Failure::kClosed);
}

// Post queues frames; the next Send writes them before its own, in order, and nothing queued is
// on the socket before that (a worker's notes ride with its reply). Queued frames beyond the
// bound go out without waiting for a Send.
TEST(Protocol, PostedFramesGoOutWithTheNextSendInOrder) {
  Pair p;
  ASSERT_EQ(p.a->Post(MessageType::kReportDetail, "first"), Channel::Failure::kNone);
  ASSERT_EQ(p.a->Post(MessageType::kReportSeries, std::string(100, 's')), Channel::Failure::kNone);
  Message m;
  const Channel::Limits soon{std::chrono::steady_clock::now() + std::chrono::milliseconds(50), nullptr};
  EXPECT_EQ(p.b->Receive(&m, soon), Channel::Failure::kTimedOut) << "a posted frame was sent before any Send";
  const std::string large(20000, 'L');  // above the one-buffer size: the queue goes out first
  ASSERT_EQ(p.a->Send(MessageType::kReply, "reply"), Channel::Failure::kNone);
  ASSERT_EQ(p.a->Post(MessageType::kReportViolations, "v"), Channel::Failure::kNone);
  std::thread writer([&] { EXPECT_EQ(p.a->Send(MessageType::kQuery, large), Channel::Failure::kNone); });
  const std::vector<std::pair<MessageType, std::string>> expected = {
      {MessageType::kReportDetail, "first"}, {MessageType::kReportSeries, std::string(100, 's')},
      {MessageType::kReply, "reply"}, {MessageType::kReportViolations, "v"}, {MessageType::kQuery, large}};
  for (const auto& [type, payload] : expected) {
    ASSERT_EQ(p.b->Receive(&m), Channel::Failure::kNone);
    EXPECT_EQ(m.type, type);
    EXPECT_EQ(m.payload, payload);
  }
  writer.join();
  // SendAhead sends its frame now; what was queued stays queued for the next Send.
  ASSERT_EQ(p.a->Post(MessageType::kReportDetail, "queued"), Channel::Failure::kNone);
  ASSERT_EQ(p.a->SendAhead(MessageType::kLog, "log line"), Channel::Failure::kNone);
  ASSERT_EQ(p.b->Receive(&m), Channel::Failure::kNone);
  EXPECT_EQ(m.type, MessageType::kLog);
  EXPECT_EQ(m.payload, "log line");
  const Channel::Limits briefly{std::chrono::steady_clock::now() + std::chrono::milliseconds(50), nullptr};
  EXPECT_EQ(p.b->Receive(&m, briefly), Channel::Failure::kTimedOut) << "SendAhead sent the queue too";
  ASSERT_EQ(p.a->Send(MessageType::kReply, "r"), Channel::Failure::kNone);
  ASSERT_EQ(p.b->Receive(&m), Channel::Failure::kNone);
  EXPECT_EQ(m.payload, "queued");
  ASSERT_EQ(p.b->Receive(&m), Channel::Failure::kNone);
  EXPECT_EQ(m.payload, "r");
  // Past the bound (1 MiB), queued frames are written without a Send.
  const std::string chunk(300000, 'c');
  std::thread poster([&] {
    for (int i = 0; i < 4; ++i) EXPECT_EQ(p.a->Post(MessageType::kReportSeries, chunk), Channel::Failure::kNone);
  });
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(p.b->Receive(&m), Channel::Failure::kNone) << "frame " << i;
    EXPECT_EQ(m.payload.size(), chunk.size());
  }
  poster.join();
}

// A large payload goes out with its header and the queued frames in one system call, from
// where it is: larger than the socket's buffer, the writes stop part way through any of them.
TEST(Protocol, LargeFramesAfterQueuedOnesArriveWholeWhereverAWriteStops) {
  Pair p;
  std::string large(3 << 20, '\0');
  for (size_t i = 0; i < large.size(); ++i) large[i] = static_cast<char>(i % 251);
  const std::string queued(5000, 'q');
  std::thread writer([&] {
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(p.a->Post(MessageType::kReportDetail, queued), Channel::Failure::kNone);
      EXPECT_EQ(p.a->Send(MessageType::kInvokeSteps, large), Channel::Failure::kNone);
    }
    EXPECT_EQ(p.a->Send(MessageType::kReply, large.substr(0, 9000)), Channel::Failure::kNone);  // no queue
  });
  Message m;
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(p.b->Receive(&m), Channel::Failure::kNone);
    EXPECT_EQ(m.type, MessageType::kReportDetail);
    EXPECT_EQ(m.payload, queued);
    ASSERT_EQ(p.b->Receive(&m), Channel::Failure::kNone);
    EXPECT_EQ(m.type, MessageType::kInvokeSteps);
    EXPECT_TRUE(m.payload == large) << "frame " << i << ": " << m.payload.size() << " bytes";
  }
  ASSERT_EQ(p.b->Receive(&m), Channel::Failure::kNone);
  EXPECT_EQ(m.type, MessageType::kReply);
  EXPECT_TRUE(m.payload == large.substr(0, 9000));
  writer.join();
}

// A query remembered as a template has its step zeroed; a query too short to hold the step
// where its function says it is (a malformed one from a worker) makes no template.
TEST(Protocol, QueryTemplateZeroesTheStepAndRefusesShortQueries) {
  Encoder q;
  q.Put<uint32_t>(2).Put<uint32_t>(0).Put<int64_t>(1234);  // step_mode(trial 0, step 1234)
  const std::optional<std::string> t = QueryTemplate(q.bytes(), 8);
  ASSERT_TRUE(t.has_value());
  Encoder expected;
  expected.Put<uint32_t>(2).Put<uint32_t>(0).Put<int64_t>(0);
  EXPECT_EQ(*t, expected.bytes());
  EXPECT_EQ(QueryTemplate(q.bytes(), 9), std::nullopt) << "7 bytes left";
  EXPECT_EQ(QueryTemplate(q.bytes().substr(0, 10), 8), std::nullopt);
  EXPECT_EQ(QueryTemplate("", 0), std::nullopt);
  EXPECT_EQ(QueryTemplate(q.bytes(), static_cast<size_t>(-4)), std::nullopt) << "an offset from a size that underflowed";
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
