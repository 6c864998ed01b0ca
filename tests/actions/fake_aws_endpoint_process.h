// FakeAwsEndpoint: fake_aws_endpoint.py (a local SageMaker + SNS + EventBridge endpoint that
// checks every call's SigV4 signature with botocore) run as a child process for one test, on
// 127.0.0.1 and a port of the OS's choosing. Needs LITMUS_BOTOCORE_PYTHON and
// LITMUS_FAKE_AWS_ENDPOINT defined by CMake (tests/actions/CMakeLists.txt). Not thread-safe.
#pragma once

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "support/run_process.h"

namespace litmus::testing {

class FakeAwsEndpoint {
 public:
  // `dir`: where the port and call record files go. `options`: fake_aws_endpoint.py's.
  FakeAwsEndpoint(const std::filesystem::path& dir, const std::string& region, std::vector<std::string> options)
      : record_(dir / "calls.json") {
    const std::filesystem::path port_file = dir / "port";
    std::vector<std::string> argv = {LITMUS_BOTOCORE_PYTHON, LITMUS_FAKE_AWS_ENDPOINT, "--port-file",
                                     port_file.string(), "--record", record_.string(), "--region", region};
    argv.insert(argv.end(), options.begin(), options.end());
    process_ = std::make_unique<ChildProcess>(argv);
    // Startup only (importing botocore); generous for loaded machines.
    for (int i = 0; i < 1200 && !std::filesystem::exists(port_file); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::ifstream in(port_file);
    in >> port_;
  }

  bool ok() const { return port_ > 0; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // The calls so far: [{"service", "operation", "params", "signature_ok", "signature_error", "status"}].
  nlohmann::json Calls() const {
    std::ifstream in(record_);
    return nlohmann::json::parse(in);
  }

 private:
  std::filesystem::path record_;
  std::unique_ptr<ChildProcess> process_;
  int port_ = 0;
};

}  // namespace litmus::testing
