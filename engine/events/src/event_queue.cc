// EventQueue: bounded queue, sender thread, retries with backoff, Close with a deadline.
#include "litmus/events/event_queue.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <random>

namespace litmus::events {

EventSink::~EventSink() = default;

EventQueue::EventQueue(std::unique_ptr<EventSink> sink, QueueOptions options)
    : sink_(std::move(sink)), options_(options) {
  options_.capacity = std::max<size_t>(1, options_.capacity);
  options_.max_attempts = std::max(1, options_.max_attempts);
  sender_ = std::thread([this] { Run(); });
}

EventQueue::~EventQueue() { Close(std::chrono::steady_clock::now()); }

void EventQueue::Push(EventItem item) {
  {
    std::lock_guard lock(mu_);
    if (closing_) return;
    if (queue_.size() >= options_.capacity) {
      queue_.pop_front();
      if (stats_.dropped_full++ == 0) {
        spdlog::warn("events: {} is not keeping up; dropping the oldest queued events (queue of {})",
                     sink_->description(), options_.capacity);
      }
    }
    queue_.push_back(std::move(item));
  }
  cv_.notify_all();
}

void EventQueue::Close(std::chrono::steady_clock::time_point deadline) {
  {
    std::lock_guard lock(mu_);
    if (closed_) return;
    closed_ = true;
    closing_ = true;
    deadline_ = deadline;
  }
  cv_.notify_all();
  if (sender_.joinable()) sender_.join();
  const QueueStats s = stats();
  if (s.undelivered > 0) {
    spdlog::warn("events: {} events not delivered to {} before the end of the job", s.undelivered,
                 sink_->description());
  }
}

QueueStats EventQueue::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

bool EventQueue::PastDeadlineLocked() const { return closing_ && std::chrono::steady_clock::now() >= deadline_; }

bool EventQueue::Backoff(std::chrono::milliseconds delay) {
  const auto until = std::chrono::steady_clock::now() + delay;
  std::unique_lock lock(mu_);
  while (std::chrono::steady_clock::now() < until) {
    if (PastDeadlineLocked()) return false;
    cv_.wait_until(lock, closing_ ? std::min(until, deadline_) : until);
  }
  return !PastDeadlineLocked();
}

void EventQueue::Run() {
  thread_local std::mt19937_64 rng(std::random_device{}());
  for (;;) {
    std::vector<EventItem> batch;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return !queue_.empty() || closing_; });
      if (queue_.empty()) return;  // closing, all delivered
      if (PastDeadlineLocked()) {
        stats_.undelivered += queue_.size();
        queue_.clear();
        return;
      }
      const size_t n = std::min(queue_.size(), std::max<size_t>(1, sink_->max_batch()));
      for (size_t i = 0; i < n; ++i) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    for (int attempt = 1; !batch.empty(); ++attempt) {
      AttemptResult result = sink_->Send(batch);
      std::unique_lock lock(mu_);
      ++stats_.attempts;
      const size_t retried = result.outcome != AttemptOutcome::kRetry ? 0
                             : result.retry.empty()                   ? batch.size()
                                                                      : result.retry.size();
      if (result.outcome == AttemptOutcome::kDrop) {
        stats_.dropped_failed += batch.size();
        lock.unlock();
        spdlog::warn("events: {} refused {} ({}); not retried", sink_->description(), batch.front().name,
                     result.error);
        break;
      }
      stats_.dropped_failed += result.dropped;
      if (result.dropped > 0) {
        spdlog::warn("events: {} refused {} event(s) ({}); not retried", sink_->description(), result.dropped,
                     result.error);
      }
      stats_.delivered += batch.size() - std::min(batch.size(), retried + result.dropped);
      if (result.outcome == AttemptOutcome::kDelivered) break;
      if (attempt >= options_.max_attempts) {
        stats_.dropped_failed += retried;
        lock.unlock();
        spdlog::warn("events: could not deliver {} event(s) to {} after {} attempts: {}", retried,
                     sink_->description(), attempt, result.error);
        break;
      }
      lock.unlock();
      if (!result.retry.empty()) {
        std::vector<EventItem> again;
        for (size_t index : result.retry) {
          if (index < batch.size()) again.push_back(std::move(batch[index]));
        }
        batch = std::move(again);
      }
      const int shift = std::min(attempt - 1, 20);
      const int64_t ceiling = std::min<int64_t>(options_.max_delay.count(), options_.base_delay.count() << shift);
      const int64_t delay = ceiling / 2 + std::uniform_int_distribution<int64_t>(0, std::max<int64_t>(0, ceiling / 2))(rng);
      spdlog::debug("events: {}: {}; retry {} in {} ms", sink_->description(), result.error, attempt, delay);
      if (!Backoff(std::chrono::milliseconds(delay))) {
        std::lock_guard again(mu_);
        stats_.undelivered += batch.size();
        break;
      }
    }
  }
}

}  // namespace litmus::events
