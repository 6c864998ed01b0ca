// MakeStderrLogger: a progress-line-clearing sink, then spdlog's colored stderr sink.
#include "stderr_logger.h"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include <mutex>

#include "run/progress_reporter.h"

namespace litmus::cli {
namespace {

// Writes nothing itself: erases the progress line so that the next sink's line starts clean.
class ClearProgressLineSink final : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg&) override { ClearProgressLine(); }
  void flush_() override {}
};

}  // namespace

std::shared_ptr<spdlog::logger> MakeStderrLogger() {
  auto logger = std::make_shared<spdlog::logger>(
      "litmus", spdlog::sinks_init_list{std::make_shared<ClearProgressLineSink>(),
                                        std::make_shared<spdlog::sinks::stderr_color_sink_mt>()});
  logger->set_pattern("litmus: %^%l%$: %v");
  return logger;
}

}  // namespace litmus::cli
