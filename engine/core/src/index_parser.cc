// Index JSON parsing (index_parser.h). The layout smdebug writes takes a one-pass fast path
// (canonical_index_parser.h); everything else is parsed streaming: a SAX parser (ScanSimpleJson
// for the plain JSON training jobs write, else nlohmann_json's) feeds a small state machine that
// fills the IndexFile directly, instead of building a DOM (one std::map and several strings per
// entry) and walking it; every trial refresh parses thousands of these. The validation is that
// of the DOM-based parser it replaced, which the tests keep as an oracle
// (tests/support/index_json_reference.h): same result, same first error, for every input.
// Duplicate keys behave as in a DOM: the last occurrence wins. No exceptions are used.
#include "index_parser.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "canonical_index_parser.h"
#include "litmus/format/mode.h"
#include "simple_json_scanner.h"

namespace litmus {
namespace {

using Json = nlohmann::json;

Status Corrupt(std::string_view file_name, std::string_view why) {
  return DataLossError(std::string(file_name) + ": " + std::string(why));
}

constexpr uint64_t kMaxInt64 = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

// The last value seen for one key of an object.
struct Slot {
  enum class Kind { kAbsent, kString, kNonNegative, kNull, kOther };
  Kind kind = Kind::kAbsent;
  std::string text;    // kString
  uint64_t number = 0;  // kNonNegative: a JSON integer >= 0 (never a float)

  bool present() const { return kind != Kind::kAbsent; }
  bool is_string() const { return kind == Kind::kString; }
  bool is_non_negative() const { return kind == Kind::kNonNegative; }
};

// One of tensor_payload / shape_payload: whether the key was there, whether its value was a list,
// and the first entry that failed validation (later entries are still parsed, then dropped).
struct Payload {
  bool present = false;
  bool is_list = false;
  std::optional<Status> first_error;
};

class IndexSax {
 public:
  explicit IndexSax(std::string_view file_name) : file_name_(file_name) {}

  // nlohmann's SAX interface (json_sax). Returning false would stop the parse; only syntax
  // errors do (validation errors are recorded and reported after the whole text parsed).
  bool null() { return Scalar(Slot{Slot::Kind::kNull, {}, 0}); }
  bool boolean(bool) { return Scalar(Slot{Slot::Kind::kOther, {}, 0}); }
  bool number_integer(Json::number_integer_t v) {
    return Scalar(v >= 0 ? Slot{Slot::Kind::kNonNegative, {}, static_cast<uint64_t>(v)}
                         : Slot{Slot::Kind::kOther, {}, 0});
  }
  bool number_unsigned(Json::number_unsigned_t v) { return Scalar(Slot{Slot::Kind::kNonNegative, {}, v}); }
  bool number_float(Json::number_float_t, const std::string&) { return Scalar(Slot{Slot::Kind::kOther, {}, 0}); }
  bool string(std::string& v) { return Scalar(Slot{Slot::Kind::kString, std::move(v), 0}); }
  bool binary(Json::binary_t&) { return Scalar(Slot{Slot::Kind::kOther, {}, 0}); }
  bool start_object(std::size_t) { return StartContainer(/*object=*/true); }
  bool start_array(std::size_t) { return StartContainer(/*object=*/false); }
  bool end_object() { return EndContainer(); }
  bool end_array() { return EndContainer(); }
  bool key(std::string& k);
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) { return false; }

  // The result once the parse succeeded, validated in the order of the DOM-based parser.
  StatusOr<IndexFile> Finish();

 private:
  // Where the parser is: the containers it is inside that matter (anything else is skipped).
  enum class Ctx { kTop, kMeta, kTensors, kTensorEntry, kShapes, kShapeEntry, kDims };
  // The key whose value comes next, in the innermost container.
  enum class Field {
    kOther, kMeta, kTensorPayload, kShapePayload, kMode, kModeStep, kEventFileName, kTensorName,
    kStartIdx, kLength, kOriginalName, kShape
  };

  bool Scalar(Slot value);
  bool StartContainer(bool object);
  bool EndContainer();
  // A key's value in the meta object or an entry: the slot it goes to (nullptr: ignored key).
  Slot* SlotFor(Field field);
  void ResetMeta() {
    meta_present_ = true;
    meta_is_object_ = false;
    meta_has_keys_ = false;
    mode_ = mode_step_ = event_file_name_ = Slot{};
  }
  // A new value for the top-level key being read (a later duplicate key replaces the earlier
  // value whole, as in a DOM): resets what that key holds.
  void TopLevelValue(bool is_object, bool is_list);
  // A new value for the "shape" key of the shape entry being read.
  void ShapeValue(bool is_list) {
    shape_is_list_ = is_list;
    dims_.clear();
    dims_ok_ = true;
  }
  void FinishTensorEntry();
  void FinishShapeEntry();
  void EntryNotAnObject();
  std::string TensorWhere() const { return "tensor_payload[" + std::to_string(tensors_.size()) + "]"; }
  std::string ShapeWhere() const { return "shape_payload[" + std::to_string(shapes_.size()) + "]"; }

  const std::string_view file_name_;
  std::vector<Ctx> stack_;
  size_t skip_depth_ = 0;  // > 0 while inside a container whose content is ignored
  Field field_ = Field::kOther;
  bool root_is_object_ = false;

  bool meta_present_ = false;
  bool meta_is_object_ = false;
  bool meta_has_keys_ = false;
  Slot mode_, mode_step_, event_file_name_;

  Payload tensor_payload_, shape_payload_;
  std::vector<IndexEntry> tensors_;
  std::vector<ShapeEntry> shapes_;
  // The entry being read.
  Slot name_, start_, length_, original_name_;
  bool shape_is_list_ = false;  // the entry's "shape" value (last one) is a list (false: absent)
  bool dims_ok_ = true;
  std::vector<int64_t> dims_;
};

Slot* IndexSax::SlotFor(Field field) {
  switch (field) {
    case Field::kMode: return &mode_;
    case Field::kModeStep: return &mode_step_;
    case Field::kEventFileName: return &event_file_name_;
    case Field::kTensorName: return &name_;
    case Field::kStartIdx: return &start_;
    case Field::kLength: return &length_;
    case Field::kOriginalName: return &original_name_;
    default: return nullptr;
  }
}

bool IndexSax::key(std::string& k) {
  if (skip_depth_ > 0) return true;
  field_ = Field::kOther;
  switch (stack_.back()) {
    case Ctx::kTop:
      if (k == "meta") field_ = Field::kMeta;
      else if (k == "tensor_payload") field_ = Field::kTensorPayload;
      else if (k == "shape_payload") field_ = Field::kShapePayload;
      break;
    case Ctx::kMeta:
      meta_has_keys_ = true;
      if (k == "mode") field_ = Field::kMode;
      else if (k == "mode_step") field_ = Field::kModeStep;
      else if (k == "event_file_name") field_ = Field::kEventFileName;
      break;
    case Ctx::kTensorEntry:
      if (k == "tensorname") field_ = Field::kTensorName;
      else if (k == "start_idx") field_ = Field::kStartIdx;
      else if (k == "length") field_ = Field::kLength;
      break;
    case Ctx::kShapeEntry:
      if (k == "tensorname") field_ = Field::kTensorName;
      else if (k == "originalname") field_ = Field::kOriginalName;
      else if (k == "shape") field_ = Field::kShape;
      break;
    default:
      break;
  }
  return true;
}

void IndexSax::TopLevelValue(bool is_object, bool is_list) {
  if (field_ == Field::kMeta) {
    ResetMeta();
    meta_is_object_ = is_object;
  } else if (field_ == Field::kTensorPayload) {
    tensor_payload_ = Payload{true, is_list, std::nullopt};
    tensors_.clear();
  } else if (field_ == Field::kShapePayload) {
    shape_payload_ = Payload{true, is_list, std::nullopt};
    shapes_.clear();
  }
}

bool IndexSax::Scalar(Slot value) {
  if (skip_depth_ > 0) return true;
  if (stack_.empty()) return true;  // the whole document is a scalar: not an object
  switch (stack_.back()) {
    case Ctx::kTop:
      TopLevelValue(/*is_object=*/false, /*is_list=*/false);
      break;
    case Ctx::kMeta:
    case Ctx::kTensorEntry:
      if (Slot* slot = SlotFor(field_)) *slot = std::move(value);
      break;
    case Ctx::kShapeEntry:
      if (field_ == Field::kShape) {
        ShapeValue(/*is_list=*/false);
      } else if (Slot* slot = SlotFor(field_)) {
        *slot = std::move(value);
      }
      break;
    case Ctx::kTensors:
    case Ctx::kShapes:
      EntryNotAnObject();
      break;
    case Ctx::kDims:
      if (value.is_non_negative() && value.number <= kMaxInt64) {
        dims_.push_back(static_cast<int64_t>(value.number));
      } else {
        dims_ok_ = false;
      }
      break;
  }
  return true;
}

bool IndexSax::StartContainer(bool object) {
  if (skip_depth_ > 0) {
    ++skip_depth_;
    return true;
  }
  if (stack_.empty()) {
    root_is_object_ = object;
    if (object) {
      stack_.push_back(Ctx::kTop);
    } else {
      skip_depth_ = 1;
    }
    return true;
  }
  std::optional<Ctx> enter;  // the container to follow; nullopt: skip its content
  switch (stack_.back()) {
    case Ctx::kTop:
      TopLevelValue(object, !object);
      if (field_ == Field::kMeta && object) enter = Ctx::kMeta;
      if (field_ == Field::kTensorPayload && !object) enter = Ctx::kTensors;
      if (field_ == Field::kShapePayload && !object) enter = Ctx::kShapes;
      break;
    case Ctx::kMeta:
    case Ctx::kTensorEntry:
      if (Slot* slot = SlotFor(field_)) *slot = Slot{Slot::Kind::kOther, {}, 0};
      break;
    case Ctx::kShapeEntry:
      if (field_ == Field::kShape) {
        ShapeValue(/*is_list=*/!object);
        if (!object) enter = Ctx::kDims;
      } else if (Slot* slot = SlotFor(field_)) {
        *slot = Slot{Slot::Kind::kOther, {}, 0};
      }
      break;
    case Ctx::kTensors:
      if (object) {
        name_ = start_ = length_ = Slot{};
        enter = Ctx::kTensorEntry;
      } else {
        EntryNotAnObject();
      }
      break;
    case Ctx::kShapes:
      if (object) {
        name_ = original_name_ = Slot{};
        ShapeValue(/*is_list=*/false);  // absent until the entry has a "shape" key
        enter = Ctx::kShapeEntry;
      } else {
        EntryNotAnObject();
      }
      break;
    case Ctx::kDims:
      dims_ok_ = false;
      break;
  }
  if (enter) {
    stack_.push_back(*enter);
    field_ = Field::kOther;
  } else {
    skip_depth_ = 1;
  }
  return true;
}

bool IndexSax::EndContainer() {
  if (skip_depth_ > 0) {
    --skip_depth_;
    return true;
  }
  const Ctx done = stack_.back();
  stack_.pop_back();
  if (done == Ctx::kTensorEntry) FinishTensorEntry();
  if (done == Ctx::kShapeEntry) FinishShapeEntry();
  field_ = Field::kOther;
  return true;
}

void IndexSax::EntryNotAnObject() {
  Payload& payload = stack_.back() == Ctx::kTensors ? tensor_payload_ : shape_payload_;
  if (payload.first_error) return;
  const std::string where = stack_.back() == Ctx::kTensors ? TensorWhere() : ShapeWhere();
  payload.first_error = Corrupt(file_name_, where + " is not an object");
}

void IndexSax::FinishTensorEntry() {
  if (tensor_payload_.first_error) return;
  const auto fail = [this](const std::string& why) { tensor_payload_.first_error = Corrupt(file_name_, TensorWhere() + why); };
  if (!name_.is_string()) return fail(".tensorname is missing or not a string");
  if (!start_.is_non_negative()) return fail(".start_idx is not a non-negative integer");
  if (!length_.is_non_negative()) return fail(".length is not a non-negative integer");
  if (length_.number < 16) {
    return fail(".length " + std::to_string(length_.number) + " is smaller than a framed record (16 bytes)");
  }
  if (start_.number > std::numeric_limits<uint64_t>::max() - length_.number) {
    return fail(": start_idx + length overflows");
  }
  tensors_.push_back(IndexEntry{std::move(name_.text), start_.number, length_.number});
}

void IndexSax::FinishShapeEntry() {
  if (shape_payload_.first_error) return;
  const auto fail = [this](const std::string& why) { shape_payload_.first_error = Corrupt(file_name_, ShapeWhere() + why); };
  if (!name_.is_string()) return fail(".tensorname is missing or not a string");
  ShapeEntry shape;
  shape.tensor_name = std::move(name_.text);
  shape.original_name = shape.tensor_name;
  if (original_name_.present() && original_name_.kind != Slot::Kind::kNull) {
    if (!original_name_.is_string()) return fail(".originalname is not a string");
    shape.original_name = std::move(original_name_.text);
  }
  if (!shape_is_list_) return fail(".shape is missing or not a list");
  if (!dims_ok_) return fail(".shape has a dimension that is not a non-negative integer");
  shape.shape = std::move(dims_);
  dims_.clear();
  shapes_.push_back(std::move(shape));
}

StatusOr<IndexFile> IndexSax::Finish() {
  if (!root_is_object_) return Corrupt(file_name_, "index file is not a JSON object");
  if (!meta_present_ || !meta_is_object_ || !meta_has_keys_) {
    return Corrupt(file_name_, "index file has no (or an empty) \"meta\" object");
  }
  if (!tensor_payload_.present && !shape_payload_.present) {
    return Corrupt(file_name_, "index file has neither \"tensor_payload\" nor \"shape_payload\"");
  }
  IndexFile index;
  if (!mode_.is_string()) return Corrupt(file_name_, "meta.mode is missing or not a string");
  const std::optional<Mode> mode = ModeFromName(mode_.text);
  if (!mode) return Corrupt(file_name_, "unknown mode '" + mode_.text + "' in meta.mode");
  index.mode = *mode;
  if (!mode_step_.present()) return Corrupt(file_name_, "meta.mode_step is missing");
  if (!mode_step_.is_non_negative() || mode_step_.number > kMaxInt64) {
    return Corrupt(file_name_, "meta.mode_step is not a non-negative integer");
  }
  index.mode_step = static_cast<int64_t>(mode_step_.number);
  if (event_file_name_.present()) {
    if (!event_file_name_.is_string()) return Corrupt(file_name_, "meta.event_file_name is not a string");
    if (!SafeRelativePath(event_file_name_.text)) {
      return InvalidArgumentError(std::string(file_name_) + ": event_file_name '" + event_file_name_.text +
                                  "' is not a relative path inside the trial");
    }
    index.event_file_name = std::move(event_file_name_.text);
  }
  if (tensor_payload_.present) {
    if (!tensor_payload_.is_list) return Corrupt(file_name_, "tensor_payload is not a list");
    if (tensor_payload_.first_error) return *tensor_payload_.first_error;
    index.tensor_payload = std::move(tensors_);
    if (!index.tensor_payload.empty() && !index.event_file_name) {
      return Corrupt(file_name_, "tensor_payload without meta.event_file_name");
    }
  }
  if (shape_payload_.present) {
    if (!shape_payload_.is_list) return Corrupt(file_name_, "shape_payload is not a list");
    if (shape_payload_.first_error) return *shape_payload_.first_error;
    index.shape_payload = std::move(shapes_);
  }
  return index;
}

}  // namespace

bool SafeRelativePath(std::string_view path) {
  if (path.empty() || path.front() == '/') return false;
  if (path.find('\0') != std::string_view::npos) return false;
  if (path.find('\\') != std::string_view::npos) return false;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view part = path.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = end + 1;
  }
  return true;
}

StatusOr<IndexFile> ParseIndexJson(std::string_view json, std::string_view file_name) {
  // The files smdebug writes, in one pass (canonical_index_parser.h).
  if (std::optional<IndexFile> canonical = ParseCanonicalIndexJson(json)) return *std::move(canonical);
  return ParseIndexJsonGeneral(json, file_name);
}

StatusOr<IndexFile> ParseIndexJsonGeneral(std::string_view json, std::string_view file_name) {
  // The fast scanner takes the files training jobs write; anything it does not take (escapes,
  // non-ASCII names, floats, syntax errors) nlohmann parses again from the start.
  {
    IndexSax sax(file_name);
    if (ScanSimpleJson(json, sax)) return sax.Finish();
  }
  IndexSax sax(file_name);
  if (!Json::sax_parse(json.begin(), json.end(), &sax)) {
    return Corrupt(file_name, "empty or corrupt index file (invalid JSON)");
  }
  return sax.Finish();
}

}  // namespace litmus
