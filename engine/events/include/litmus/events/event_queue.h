// EventQueue: a bounded queue in front of one EventSink, drained by its own sender thread, so that
// whoever pushes (the rule runner, through JobReporter) never waits for the receiver. Failed
// deliveries are retried with exponential backoff (equal jitter) up to a number of attempts; when
// the queue is full the oldest event is dropped (the newest status matters most). Close drains
// what is queued until a deadline. Thread-safety: Push and Close may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "litmus/events/event_sink.h"

namespace litmus::events {

struct QueueOptions {
  size_t capacity = 1000;  // events waiting; beyond it the oldest is dropped
  int max_attempts = 8;    // per batch, the first included
  std::chrono::milliseconds base_delay{250};   // before retry n: [d/2, d], d = base * 2^(n-1)
  std::chrono::milliseconds max_delay{10000};  // cap of d
};

struct QueueStats {
  uint64_t delivered = 0;
  uint64_t attempts = 0;          // Send calls
  uint64_t dropped_full = 0;      // pushed out of a full queue
  uint64_t dropped_failed = 0;    // refused for good, or out of attempts
  uint64_t undelivered = 0;       // still queued or in flight when Close's deadline passed
};

class EventQueue {
 public:
  EventQueue(std::unique_ptr<EventSink> sink, QueueOptions options = {});
  // Close(now) if not closed: the request in flight ends, the rest is not delivered.
  ~EventQueue();
  EventQueue(const EventQueue&) = delete;
  EventQueue& operator=(const EventQueue&) = delete;

  // Never waits for the receiver. Ignored after Close.
  void Push(EventItem item);
  // Delivers what is queued (retrying as usual) until it is empty or `deadline` passes, then
  // stops the sender thread and logs one warning if events were left undelivered. Returns after
  // the deadline at the latest plus one request's own timeout (the transport's). Idempotent.
  void Close(std::chrono::steady_clock::time_point deadline);
  QueueStats stats() const;
  const EventSink& sink() const { return *sink_; }

 private:
  void Run();
  // Waits `delay`, or less if closing and the deadline passes first; false then.
  bool Backoff(std::chrono::milliseconds delay);
  bool PastDeadlineLocked() const;

  std::unique_ptr<EventSink> sink_;
  QueueOptions options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<EventItem> queue_;
  bool closing_ = false;
  bool closed_ = false;
  std::chrono::steady_clock::time_point deadline_;
  QueueStats stats_;
  std::thread sender_;
};

}  // namespace litmus::events
