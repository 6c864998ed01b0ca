// Serialization of index and collections JSON byte-for-byte as smdebug's json.dumps writes them
// (", " and ": " separators, ensure_ascii escaping, keys in smdebug's order, no trailing newline).
// Pure functions; thread-safe.
#include "litmus/format/index_model.h"

#include <algorithm>
#include <array>

#include "utf8.h"

namespace litmus {
namespace {

constexpr char kHex[] = "0123456789abcdef";

void AppendU16Escape(std::string* out, uint32_t unit) {
  out->append("\\u");
  for (int shift = 12; shift >= 0; shift -= 4) out->push_back(kHex[(unit >> shift) & 0xF]);
}

// The code point at s[*i], advancing *i; an invalid sequence yields U+FFFD and advances one
// byte (litmus validates names before writing, so this only guards against misuse).
uint32_t NextCodePoint(std::string_view s, size_t* i) {
  uint32_t cp = 0;
  const size_t len = internal::DecodeUtf8(s, *i, &cp);
  if (len == 0) {
    ++*i;
    return 0xFFFD;
  }
  *i += len;
  return cp;
}

void AppendQuoted(std::string* out, std::string_view s) {
  out->push_back('"');
  for (size_t i = 0; i < s.size();) {
    const uint32_t cp = NextCodePoint(s, &i);
    switch (cp) {
      case '"':
        out->append("\\\"");
        continue;
      case '\\':
        out->append("\\\\");
        continue;
      case '\n':
        out->append("\\n");
        continue;
      case '\r':
        out->append("\\r");
        continue;
      case '\t':
        out->append("\\t");
        continue;
      case '\b':
        out->append("\\b");
        continue;
      case '\f':
        out->append("\\f");
        continue;
      default:
        break;
    }
    if (cp >= 0x20 && cp < 0x7F) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x10000) {
      AppendU16Escape(out, cp);
    } else {
      const uint32_t v = cp - 0x10000;
      AppendU16Escape(out, 0xD800 | (v >> 10));
      AppendU16Escape(out, 0xDC00 | (v & 0x3FF));
    }
  }
  out->push_back('"');
}

void AppendKey(std::string* out, std::string_view key) {
  AppendQuoted(out, key);
  out->append(": ");
}

template <typename T>
void AppendIntList(std::string* out, const std::vector<T>& values) {
  out->push_back('[');
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out->append(", ");
    out->append(std::to_string(values[i]));
  }
  out->push_back(']');
}

void AppendStringList(std::string* out, const std::vector<std::string>& values) {
  out->push_back('[');
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out->append(", ");
    AppendQuoted(out, values[i]);
  }
  out->push_back(']');
}

const char* Bool(bool b) { return b ? "true" : "false"; }

void AppendModeConfig(std::string* out, const ModeSaveConfig& c) {
  out->append("{\"save_interval\": ");
  out->append(std::to_string(c.save_interval));
  out->append(", \"save_steps\": ");
  AppendIntList(out, c.save_steps);
  out->append(", \"start_step\": ");
  out->append(std::to_string(c.start_step));
  out->append(", \"end_step\": ");
  out->append(c.end_step ? std::to_string(*c.end_step) : "null");
  out->push_back('}');
}

void AppendCollection(std::string* out, const CollectionJson& c) {
  out->append("{\"name\": ");
  AppendQuoted(out, c.name);
  out->append(", \"include_regex\": ");
  AppendStringList(out, c.include_regex);
  out->append(", \"tensor_names\": ");
  std::vector<std::string> names = c.tensor_names;
  std::sort(names.begin(), names.end());  // bytewise == code point order, as Python sorts str
  AppendStringList(out, names);
  out->append(", \"reduction_config\": ");
  if (c.reduction_config) {
    out->append("{\"save_raw_tensor\": ");
    out->append(Bool(c.reduction_config->save_raw_tensor));
    out->append(", \"reductions\": ");
    AppendQuoted(out, c.reduction_config->reductions);
    out->append(", \"save_shape\": ");
    out->append(Bool(c.reduction_config->save_shape));
    out->push_back('}');
  } else {
    out->append("null");
  }
  out->append(", \"save_config\": ");
  if (c.save_config) {
    out->push_back('{');
    bool first = true;
    for (Mode m : kAllModes) {  // TRAIN, EVAL, PREDICT, GLOBAL
      if (!first) out->append(", ");
      first = false;
      AppendKey(out, ModeName(m));
      const auto it = c.save_config->find(m);
      if (it != c.save_config->end() && it->second) {
        AppendModeConfig(out, *it->second);
      } else {
        out->append("null");
      }
    }
    out->push_back('}');
  } else {
    out->append("null");
  }
  out->append(", \"save_histogram\": ");
  out->append(Bool(c.save_histogram));
  out->push_back('}');
}

}  // namespace

std::string JsonQuote(std::string_view utf8) {
  std::string out;
  out.reserve(utf8.size() + 2);
  AppendQuoted(&out, utf8);
  return out;
}

std::string SerializeIndexJson(const IndexFile& index) {
  std::string out;
  out.reserve(160 + 80 * index.tensor_payload.size() + 96 * index.shape_payload.size());
  out.append("{\"meta\": {\"mode\": ");
  AppendQuoted(&out, ModeName(index.mode));
  out.append(", \"mode_step\": ");
  out.append(std::to_string(index.mode_step));
  if (index.event_file_name) {
    out.append(", \"event_file_name\": ");
    AppendQuoted(&out, *index.event_file_name);
  }
  out.append("}, \"tensor_payload\": [");
  for (size_t i = 0; i < index.tensor_payload.size(); ++i) {
    const IndexEntry& e = index.tensor_payload[i];
    if (i > 0) out.append(", ");
    out.append("{\"tensorname\": ");
    AppendQuoted(&out, e.tensor_name);
    out.append(", \"start_idx\": ");
    out.append(std::to_string(e.start_idx));
    out.append(", \"length\": ");
    out.append(std::to_string(e.length));
    out.push_back('}');
  }
  out.append("], \"shape_payload\": [");
  for (size_t i = 0; i < index.shape_payload.size(); ++i) {
    const ShapeEntry& e = index.shape_payload[i];
    if (i > 0) out.append(", ");
    out.append("{\"tensorname\": ");
    AppendQuoted(&out, e.tensor_name);
    out.append(", \"originalname\": ");
    AppendQuoted(&out, e.original_name);
    out.append(", \"shape\": ");
    AppendIntList(&out, e.shape);
    out.push_back('}');
  }
  out.append("]}");
  return out;
}

std::string SerializeCollectionsJson(const CollectionsFile& file) {
  std::string out = "{\"collections\": {";
  for (size_t i = 0; i < file.collections.size(); ++i) {
    if (i > 0) out.append(", ");
    AppendKey(&out, file.collections[i].name);
    AppendCollection(&out, file.collections[i]);
  }
  out.append("}, \"_meta\": {\"num_workers\": ");
  out.append(std::to_string(file.num_workers));
  out.append("}}");
  return out;
}

}  // namespace litmus
