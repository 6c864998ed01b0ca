// LocalHttpServer (local_http_server.h): blocking sockets polled with short timeouts so the
// destructor can stop every thread promptly.
#include "unit/aws/local_http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace litmus::testing {
namespace {

const char* Reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 204: return "No Content";
    case 206: return "Partial Content";
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 416: return "Range Not Satisfiable";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "Status";
  }
}

// Waits until `fd` is readable; false on stop or error.
bool WaitReadable(int fd, const std::atomic<bool>& stop) {
  while (!stop.load()) {
    pollfd p{fd, POLLIN, 0};
    const int r = poll(&p, 1, 50);
    if (r > 0) return true;
    if (r < 0) return false;
  }
  return false;
}

bool SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

std::string ServedRequest::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (key.size() == name.size() && strncasecmp(key.data(), name.data(), name.size()) == 0) return value;
  }
  return "";
}

LocalHttpServer::LocalHttpServer(Handler handler) : handler_(std::move(handler)) {
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) throw std::runtime_error("socket failed");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 || listen(listen_fd_, 64) != 0) {
    close(listen_fd_);
    throw std::runtime_error("bind/listen on 127.0.0.1 failed");
  }
  socklen_t size = sizeof(address);
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &size);
  port_ = ntohs(address.sin_port);
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

LocalHttpServer::~LocalHttpServer() {
  stop_.store(true);
  acceptor_.join();
  close(listen_fd_);
  std::lock_guard<std::mutex> lock(mu_);
  for (std::thread& worker : workers_) worker.join();
}

void LocalHttpServer::AcceptLoop() {
  while (WaitReadable(listen_fd_, stop_)) {
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    connections_.fetch_add(1);
    std::lock_guard<std::mutex> lock(mu_);
    workers_.emplace_back([this, fd] { Serve(fd); });
  }
}

void LocalHttpServer::Serve(int fd) {
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  std::string buffer;
  char chunk[65536];
  while (true) {
    // Read one request: headers up to the blank line, then Content-Length bytes of body.
    size_t header_end;
    while ((header_end = buffer.find("\r\n\r\n")) == std::string::npos) {
      if (!WaitReadable(fd, stop_)) return;
      const ssize_t n = recv(fd, chunk, sizeof(chunk), 0);
      if (n <= 0) return;
      buffer.append(chunk, static_cast<size_t>(n));
    }
    ServedRequest request;
    const std::string head = buffer.substr(0, header_end);
    size_t line_end = head.find("\r\n");
    const std::string request_line = head.substr(0, line_end);
    const size_t sp1 = request_line.find(' '), sp2 = request_line.rfind(' ');
    request.method = request_line.substr(0, sp1);
    request.target = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
    size_t content_length = 0;
    while (line_end != std::string::npos && line_end < head.size()) {
      const size_t next = head.find("\r\n", line_end + 2);
      const std::string line = head.substr(line_end + 2, (next == std::string::npos ? head.size() : next) - line_end - 2);
      line_end = next;
      const size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string name = line.substr(0, colon);
      std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
      std::string value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(' '));
      if (name == "content-length") content_length = std::stoul(value);
      request.headers.emplace_back(std::move(name), std::move(value));
    }
    buffer.erase(0, header_end + 4);
    while (buffer.size() < content_length) {
      if (!WaitReadable(fd, stop_)) return;
      const ssize_t n = recv(fd, chunk, sizeof(chunk), 0);
      if (n <= 0) return;
      buffer.append(chunk, static_cast<size_t>(n));
    }
    request.body = buffer.substr(0, content_length);
    buffer.erase(0, content_length);

    const ServedResponse response = handler_(request);
    requests_.fetch_add(1);
    if (response.delay.count() > 0) std::this_thread::sleep_for(response.delay);
    if (response.drop_connection) return;
    std::string out = "HTTP/1.1 " + std::to_string(response.status) + " " + Reason(response.status) + "\r\n";
    bool has_length = false;
    for (const auto& [name, value] : response.headers) {
      has_length |= strcasecmp(name.c_str(), "content-length") == 0;
      out += name + ": " + value + "\r\n";
    }
    if (!has_length) out += "Content-Length: " + std::to_string(response.body.size()) + "\r\n";
    out += "\r\n";
    if (request.method != "HEAD") out += response.body;
    if (!SendAll(fd, out)) return;
  }
}

}  // namespace litmus::testing
