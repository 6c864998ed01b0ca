// LocalHttpServer: a small HTTP/1.1 server on 127.0.0.1 (an ephemeral port) for tests: the
// container and instance-metadata credential endpoints, the curl transport, and a fault-injecting
// proxy in front of the S3 test server. Keep-alive connections, one thread per connection; a
// handler may delay its answer or drop the connection without answering.
// Thread-safety: the handler runs on connection threads, possibly concurrently.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace litmus::testing {

struct ServedRequest {
  std::string method;
  std::string target;  // path and query as sent ("/latest/api/token", "/bucket/?list-type=2")
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;
  std::string Header(std::string_view name) const;  // "" if absent
};

struct ServedResponse {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;  // for HEAD, only its size is sent (as Content-Length) unless set in headers
  std::chrono::milliseconds delay{0};  // wait this long before answering
  bool drop_connection = false;        // close the connection without answering
};

class LocalHttpServer {
 public:
  using Handler = std::function<ServedResponse(const ServedRequest&)>;
  explicit LocalHttpServer(Handler handler);
  ~LocalHttpServer();  // stops accepting, closes connections, joins threads
  LocalHttpServer(const LocalHttpServer&) = delete;
  LocalHttpServer& operator=(const LocalHttpServer&) = delete;

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int connections_accepted() const { return connections_.load(); }
  int requests_served() const { return requests_.load(); }

 private:
  void AcceptLoop();
  void Serve(int fd);

  Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::atomic<int> requests_{0};
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<std::thread> workers_;
};

}  // namespace litmus::testing
