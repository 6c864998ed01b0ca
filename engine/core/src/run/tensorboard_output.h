// TensorBoardOutput: `litmus run --tensorboard-dir DIR` (docs/report.md "TensorBoard"). A
// JobObserver writing one event file in DIR/litmus/ (a TensorBoard run named "litmus"): per rule
// the scalar litmus/<rule>/condition_met (0/1) at each evaluated global step, each published
// series as litmus/<rule>/<series>[/<tensor>], a text summary litmus/<rule>/firing with the
// message at each firing, and with `losses` the trial's losses collection as losses/<tensor>.
// Records reach the file at each FilesWritten. A file that cannot be created or written is
// logged once as an error of this output and the output stops; the job's verdict never changes.
// Thread-compatible: the runner's thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "litmus/engine/trial.h"
#include "litmus/format/env.h"
#include "litmus/format/tensorboard_events.h"
#include "run/job_observer.h"

namespace litmus {

struct TensorBoardOptions {
  std::string dir;      // the --logdir TensorBoard is pointed at; the file goes to dir/litmus/
  bool losses = false;  // also the trial's `losses` collection (read from the runner's trial)
};

class TensorBoardOutput final : public JobObserver {
 public:
  // Subfolder of TensorBoardOptions::dir (the run's name in TensorBoard) and the file's suffix.
  static constexpr const char* kRunName = "litmus";
  static constexpr const char* kFileSuffix = ".litmus";

  // Creates the event file at once (an error is logged then; see above). `files` (not owned; must
  // outlive this object) writes the event file (local folders).
  TensorBoardOutput(TensorBoardOptions options, Env* files);
  ~TensorBoardOutput() override;

  // The event file's path, empty if it could not be created.
  std::string path() const;

  void TrialOpened(const Trial& trial) override { trial_ = &trial; }
  void StepEvaluated(const std::string& rule, int64_t step, bool condition_met, const SeriesStore& series,
                     const std::vector<SeriesStore::NewPoint>& points) override;
  void RuleFired(const std::string& rule, int64_t step, const std::string& message) override;
  void FilesWritten(bool finished) override;

  // Tags (docs/report.md "TensorBoard").
  static std::string ConditionMetTag(const std::string& rule);
  static std::string SeriesTag(const std::string& rule, const std::string& series, const std::string& tensor);
  static std::string FiringTag(const std::string& rule);
  static std::string LossTag(const std::string& tensor);

 private:
  void Fail(const Status& status);
  void AddLosses();

  TensorBoardOptions options_;
  std::unique_ptr<tensorboard::EventFileWriter> writer_;  // null once failed
  const Trial* trial_ = nullptr;                          // the runner's, for the losses
  struct RuleTags {
    std::string condition_met;
    std::vector<std::string> series;  // by index in the rule's SeriesStore
  };
  std::map<std::string, RuleTags> tags_;                  // by rule
  std::map<std::string, int64_t> loss_written_;           // tensor -> last global step written
};

}  // namespace litmus
