// Framing and payload coding of the runner/worker protocol (format: protocol.h).
// Thread-compatible.
#include "isolation/protocol.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace litmus::isolation {
namespace {

struct FrameHeader {
  uint32_t type;
  uint32_t reserved;
  uint64_t length;
};
static_assert(sizeof(FrameHeader) == 16);

// Messages up to this size go out in one send (on the caller's stack, which may be a plugin's).
constexpr size_t kSmallFrame = 8 * 1024;

}  // namespace

std::optional<std::string> QueryTemplate(std::string_view query, size_t offset) {
  if (offset > query.size() || query.size() - offset < sizeof(int64_t)) return std::nullopt;
  std::string args(query);
  std::memset(args.data() + offset, 0, sizeof(int64_t));
  return args;
}

Encoder& Encoder::PutBytes(const void* data, size_t size) {
  // (One growth for both parts: the size, then the bytes.)
  if (buffer_.capacity() - buffer_.size() < sizeof(uint64_t) + size) {
    buffer_.reserve(std::max(2 * buffer_.capacity(), buffer_.size() + sizeof(uint64_t) + size));
  }
  Put<uint64_t>(size);
  if (size > 0) buffer_.append(static_cast<const char*>(data), size);
  return *this;
}

std::string_view Decoder::GetBytes() {
  const uint64_t size = Get<uint64_t>();
  if (failed_ || data_.size() - pos_ < size) {
    failed_ = true;
    pos_ = data_.size();
    return {};
  }
  const std::string_view out = data_.substr(pos_, size);
  pos_ += size;
  return out;
}

Channel::~Channel() {
  if (fd_ >= 0) close(fd_);
}

Channel::Failure Channel::Wait(short events, const Limits& limits) {
  while (true) {
    if (limits.abort && limits.abort()) return Failure::kAborted;
    int timeout_ms = -1;
    if (limits.deadline) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*limits.deadline -
                                                                              std::chrono::steady_clock::now());
      if (left.count() <= 0) return Failure::kTimedOut;
      timeout_ms = static_cast<int>(std::min<int64_t>(left.count() + 1, 1 << 30));
    }
    if (limits.abort) timeout_ms = timeout_ms < 0 ? 50 : std::min(timeout_ms, 50);
    pollfd p{fd_, events, 0};
    const int n = poll(&p, 1, timeout_ms);
    if (n < 0) {
      if (errno == EINTR) continue;
      error_ = std::strerror(errno);
      return Failure::kClosed;
    }
    if (n == 0) continue;
    // POLLHUP/POLLERR: let the read/write below report what happened.
    return Failure::kNone;
  }
}

Channel::Failure Channel::WriteAll(const char* data, size_t size, const Limits& limits) {
  return WriteAll(data, size, nullptr, 0, limits);
}

Channel::Failure Channel::WriteAll(const char* data, size_t size, const char* more, size_t more_size,
                                   const Limits& limits) {
  iovec parts[2] = {{const_cast<char*>(data), size}, {const_cast<char*>(more), more_size}};
  size_t first = size > 0 ? 0 : 1;  // the first part with bytes left
  while (first < 2 && parts[first].iov_len > 0) {
    msghdr message{};
    message.msg_iov = parts + first;
    message.msg_iovlen = parts[1].iov_len > 0 ? 2 - first : 1;
    const ssize_t n = sendmsg(fd_, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      auto left = static_cast<size_t>(n);
      while (first < 2 && left >= parts[first].iov_len) {
        left -= parts[first].iov_len;
        parts[first].iov_len = 0;
        ++first;
      }
      if (first < 2) {
        parts[first].iov_base = static_cast<char*>(parts[first].iov_base) + left;
        parts[first].iov_len -= left;
      }
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (const Failure f = Wait(POLLOUT, limits); f != Failure::kNone) return f;
      continue;
    }
    error_ = n < 0 ? std::strerror(errno) : "connection closed";
    return Failure::kClosed;
  }
  return Failure::kNone;
}

Channel::Failure Channel::RecvSome(char* data, size_t size, size_t* received, const Limits& limits) {
  while (true) {
    const ssize_t n = recv(fd_, data, size, MSG_DONTWAIT);
    if (n > 0) {
      *received = static_cast<size_t>(n);
      return Failure::kNone;
    }
    if (n == 0) {
      error_ = "connection closed";
      return Failure::kClosed;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (const Failure f = Wait(POLLIN, limits); f != Failure::kNone) return f;
      continue;
    }
    error_ = std::strerror(errno);
    return Failure::kClosed;
  }
}

Channel::Failure Channel::ReadAll(char* data, size_t size, const Limits& limits) {
  while (size > 0) {
    size_t n = 0;
    if (const Failure f = RecvSome(data, size, &n, limits); f != Failure::kNone) return f;
    data += n;
    size -= n;
  }
  return Failure::kNone;
}

Channel::Failure Channel::Send(MessageType type, std::string_view payload, const Limits& limits) {
  const FrameHeader header{static_cast<uint32_t>(type), 0, payload.size()};
  // Queued frames, the header and the payload go out in one system call: a small payload copied
  // after the rest into one buffer, a large one from where it is. (A header written alone woke
  // the peer for 24 bytes, and it waited again for the payload: a context switch more per call.)
  if (!out_.empty()) {
    out_.append(reinterpret_cast<const char*>(&header), sizeof(header));
    Failure f = Failure::kNone;
    if (payload.size() <= kSmallFrame) {
      out_.append(payload);
      f = WriteAll(out_.data(), out_.size(), {}, 0, limits);
    } else {
      f = WriteAll(out_.data(), out_.size(), payload.data(), payload.size(), limits);
    }
    out_.clear();
    return f;
  }
  if (payload.size() <= kSmallFrame) {
    char frame[sizeof(FrameHeader) + kSmallFrame];
    std::memcpy(frame, &header, sizeof(header));
    if (!payload.empty()) std::memcpy(frame + sizeof(header), payload.data(), payload.size());
    return WriteAll(frame, sizeof(header) + payload.size(), limits);
  }
  return WriteAll(reinterpret_cast<const char*>(&header), sizeof(header), payload.data(), payload.size(), limits);
}

Channel::Failure Channel::SendAhead(MessageType type, std::string_view payload, const Limits& limits) {
  std::string queued;
  queued.swap(out_);
  const Failure f = Send(type, payload, limits);
  out_.swap(queued);
  return f;
}

Channel::Failure Channel::Post(MessageType type, std::string_view payload, const Limits& limits) {
  const FrameHeader header{static_cast<uint32_t>(type), 0, payload.size()};
  out_.append(reinterpret_cast<const char*>(&header), sizeof(header));
  out_.append(payload);
  if (out_.size() < kMaxQueued) return Failure::kNone;
  const Failure f = WriteAll(out_.data(), out_.size(), limits);
  out_.clear();
  return f;
}

Channel::Failure Channel::Fill(size_t size, const Limits& limits) {
  if (in_.size() < kInBuffer) in_.resize(kInBuffer);
  if (in_begin_ == in_end_) in_begin_ = in_end_ = 0;
  if (in_.size() - in_begin_ < size) {  // (not enough room after the unread bytes: move them first)
    std::memmove(in_.data(), in_.data() + in_begin_, in_end_ - in_begin_);
    in_end_ -= in_begin_;
    in_begin_ = 0;
  }
  while (in_end_ - in_begin_ < size) {
    size_t n = 0;
    if (const Failure f = RecvSome(in_.data() + in_end_, in_.size() - in_end_, &n, limits); f != Failure::kNone) {
      return f;
    }
    in_end_ += n;
  }
  return Failure::kNone;
}

Channel::Failure Channel::Receive(Message* out, const Limits& limits) {
  FrameHeader header{};
  if (const Failure f = Fill(sizeof(header), limits); f != Failure::kNone) return f;
  std::memcpy(&header, in_.data() + in_begin_, sizeof(header));
  in_begin_ += sizeof(header);
  if (header.reserved != 0 || header.length > kMaxPayload) {
    error_ = "malformed frame header (type " + std::to_string(header.type) + ", length " +
             std::to_string(header.length) + ")";
    return Failure::kProtocol;
  }
  out->type = static_cast<MessageType>(header.type);
  out->payload.clear();
  // A payload that fits the buffer comes through it; a larger one (a tensor value) takes what the
  // buffer holds and reads the rest in place.
  if (header.length <= kInBuffer) {
    const size_t length = static_cast<size_t>(header.length);
    if (const Failure f = Fill(length, limits); f != Failure::kNone) return f;
    out->payload.assign(in_.data() + in_begin_, length);
    in_begin_ += length;
    return Failure::kNone;
  }
  const size_t buffered = in_end_ - in_begin_;  // < header.length
  out->payload.assign(in_.data() + in_begin_, buffered);
  in_begin_ = in_end_ = 0;
  // Grown as the bytes arrive: a peer that announces a length it does not send (a plugin that
  // scribbles on its worker's socket) cannot make this side allocate it.
  constexpr uint64_t kChunk = uint64_t{64} << 20;
  for (uint64_t remaining = header.length - buffered; remaining > 0;) {
    const size_t chunk = static_cast<size_t>(std::min(remaining, kChunk));
    const size_t filled = out->payload.size();
    out->payload.resize(filled + chunk);
    if (const Failure f = ReadAll(out->payload.data() + filled, chunk, limits); f != Failure::kNone) return f;
    remaining -= chunk;
  }
  return Failure::kNone;
}

}  // namespace litmus::isolation
