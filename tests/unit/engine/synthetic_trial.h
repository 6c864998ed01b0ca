// Test helper: writes small smdebug-layout trials by hand into a TempDir (collections files,
// index files, event files with float32 tensors, the end marker), so Trial tests can stage
// exactly the situations they need. Not thread-safe.
#pragma once

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "litmus/format/event_codec.h"
#include "litmus/format/index_model.h"
#include "litmus/format/tfrecord.h"
#include "litmus/format/trial_layout.h"
#include "support/temp_dir.h"

namespace litmus::testing {

struct SyntheticTensor {
  std::string name;
  std::vector<float> values;  // 1-D float32
};

class SyntheticTrial {
 public:
  const TempDir& dir() const { return dir_; }
  std::string root() const { return dir_.str(); }

  void WriteCollections(const std::vector<std::string>& workers, int64_t num_workers) const {
    CollectionsFile file;
    file.num_workers = num_workers;
    CollectionJson weights;
    weights.name = "weights";
    weights.include_regex = {"^(?!gradient).*weight"};
    file.collections.push_back(weights);
    CollectionJson listed;
    listed.name = "listed";
    listed.tensor_names = {"loss", "never_saved"};
    file.collections.push_back(listed);
    for (const std::string& w : workers) {
      dir_.WriteFile(layout::CollectionsFilePath(w), SerializeCollectionsJson(file));
    }
  }

  // Writes the event file (unless `event_file` is false) and the index file of (step, worker).
  void WriteStep(int64_t step, const std::string& worker, Mode mode, int64_t mode_step,
                 const std::vector<SyntheticTensor>& tensors, const std::vector<ShapeEntry>& shapes = {},
                 bool event_file = true) const {
    IndexFile index;
    index.mode = mode;
    index.mode_step = mode_step;
    std::string events;
    for (const SyntheticTensor& t : tensors) {
      const std::vector<int64_t> shape{static_cast<int64_t>(t.values.size())};
      TensorEventSpec spec;
      spec.step = step;
      spec.tag = t.name;
      spec.mode = mode;
      spec.mode_step = mode_step;
      spec.dtype = DType::kFloat32;
      spec.shape = shape;
      spec.content = std::as_bytes(std::span(t.values));
      const EncodedEvent encoded = EncodeTensorEvent(spec);
      std::string payload = encoded.prefix;
      payload.append(reinterpret_cast<const char*>(encoded.content.data()), encoded.content.size());
      payload += encoded.suffix;
      const std::string record = tfrecord::FrameRecord(payload, footer_);
      index.tensor_payload.push_back({t.name, events.size(), record.size()});
      events += record;
    }
    index.shape_payload = shapes;
    if (!tensors.empty()) index.event_file_name = layout::EventFilePath(step, worker);
    if (event_file && !tensors.empty()) dir_.WriteFile(*index.event_file_name, events);
    dir_.WriteFile(layout::IndexFilePath(step, worker), SerializeIndexJson(index));
  }

  // A step whose tensors are one-element float32 values `value`.
  void WriteSimpleStep(int64_t step, const std::string& worker, Mode mode, int64_t mode_step,
                       const std::vector<std::string>& names = {"loss"}, float value = 1.0f) const {
    std::vector<SyntheticTensor> tensors;
    for (const std::string& n : names) tensors.push_back({n, {value}});
    WriteStep(step, worker, mode, mode_step, tensors);
  }

  // Footers of the records WriteStep writes from now on: smdebug's placeholder (its default), or
  // the payload's CRC.
  void set_footer(tfrecord::FooterKind footer) { footer_ = footer; }

  void WriteEndMarker() const { dir_.WriteFile(layout::kEndOfJobFile, ""); }
  void WriteRaw(std::string_view relative, std::string_view content) const { dir_.WriteFile(relative, content); }

 private:
  TempDir dir_;
  tfrecord::FooterKind footer_ = tfrecord::FooterKind::kPlaceholder;
};

}  // namespace litmus::testing
