// ParseCanonicalIndexJson (canonical_index_parser.h): one pass over the text, each token
// expected in turn; the first surprise returns nullopt (the general parser decides).
#include "canonical_index_parser.h"

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "index_parser.h"
#include "litmus/format/mode.h"

namespace litmus {
namespace {

class Cursor {
 public:
  explicit Cursor(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}

  // Skips JSON whitespace, then consumes `c` if it comes next.
  bool Char(char c) {
    SkipSpace();
    if (p_ == end_ || *p_ != c) return false;
    ++p_;
    return true;
  }
  // A string of printable ASCII without escapes; its content in *out (a view of the text).
  bool String(std::string_view* out) {
    if (!Char('"')) return false;
    const void* quote = std::memchr(p_, '"', static_cast<size_t>(end_ - p_));
    if (quote == nullptr) return false;
    const char* const close = static_cast<const char*>(quote);
    // (No early exit: the compiler vectorizes the check.)
    bool plain = true;
    for (const char* c = p_; c != close; ++c) {
      const auto byte = static_cast<unsigned char>(*c);
      plain &= byte >= 0x20 && byte < 0x7f && byte != '\\';
    }
    if (!plain) return false;
    *out = std::string_view(p_, static_cast<size_t>(close - p_));
    p_ = close + 1;
    return true;
  }
  // The quoted key `key` (a literal) and its colon.
  template <size_t N>
  bool Key(const char (&key)[N]) {
    constexpr size_t kLength = N - 1;
    SkipSpace();
    if (static_cast<size_t>(end_ - p_) < kLength + 2 || p_[0] != '"' || std::memcmp(p_ + 1, key, kLength) != 0 ||
        p_[kLength + 1] != '"') {
      return false;
    }
    p_ += kLength + 2;
    return Char(':');
  }
  // An integer without sign, fraction or exponent, at most 19 digits, no leading zero (so it
  // fits in uint64_t); the general parser reads the same value.
  bool Integer(uint64_t* out) {
    SkipSpace();
    const char* const start = p_;
    uint64_t value = 0;
    while (p_ != end_ && *p_ >= '0' && *p_ <= '9') value = value * 10 + static_cast<uint64_t>(*p_++ - '0');
    const size_t digits = static_cast<size_t>(p_ - start);
    if (digits == 0 || digits > 19 || (digits > 1 && *start == '0')) return false;
    if (p_ != end_ && (*p_ == '.' || *p_ == 'e' || *p_ == 'E')) return false;
    *out = value;
    return true;
  }
  bool AtEnd() {
    SkipSpace();
    return p_ == end_;
  }

 private:
  void SkipSpace() {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }

  const char* p_;
  const char* const end_;
};

constexpr uint64_t kMaxInt64 = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

}  // namespace

std::optional<IndexFileView> ParseCanonicalIndexView(std::string_view json) {
  Cursor in(json);
  IndexFileView index;
  // meta: every check of the general parser that could fail returns nullopt here.
  std::string_view mode_name, event_file;
  uint64_t mode_step = 0;
  if (!in.Char('{') || !in.Key("meta") || !in.Char('{') || !in.Key("mode") || !in.String(&mode_name) ||
      !in.Char(',') || !in.Key("mode_step") || !in.Integer(&mode_step) || !in.Char(',') ||
      !in.Key("event_file_name") || !in.String(&event_file) || !in.Char('}')) {
    return std::nullopt;
  }
  const std::optional<Mode> mode = ModeFromName(mode_name);
  if (!mode || mode_step > kMaxInt64 || !SafeRelativePath(event_file)) return std::nullopt;
  index.mode = *mode;
  index.mode_step = static_cast<int64_t>(mode_step);
  index.event_file_name.emplace(event_file);
  // tensor_payload
  if (!in.Char(',') || !in.Key("tensor_payload") || !in.Char('[')) return std::nullopt;
  if (!in.Char(']')) {
    // (An estimate from the text's size, so that the vector rarely grows: entries are ~80 bytes.)
    index.tensor_payload.reserve(json.size() / 64);
    do {
      std::string_view name;
      uint64_t start = 0, length = 0;
      if (!in.Char('{') || !in.Key("tensorname") || !in.String(&name) || !in.Char(',') || !in.Key("start_idx") ||
          !in.Integer(&start) || !in.Char(',') || !in.Key("length") || !in.Integer(&length) || !in.Char('}')) {
        return std::nullopt;
      }
      if (length < 16 || start > std::numeric_limits<uint64_t>::max() - length) return std::nullopt;
      index.tensor_payload.push_back(IndexEntryView{name, start, length});
    } while (in.Char(','));
    if (!in.Char(']')) return std::nullopt;
  }
  // An empty shape_payload, or none.
  if (in.Char(',')) {
    if (!in.Key("shape_payload") || !in.Char('[') || !in.Char(']')) return std::nullopt;
  }
  if (!in.Char('}') || !in.AtEnd()) return std::nullopt;
  return index;
}

std::optional<IndexFile> ParseCanonicalIndexJson(std::string_view json) {
  std::optional<IndexFileView> view = ParseCanonicalIndexView(json);
  if (!view) return std::nullopt;
  return view->ToIndexFile();
}

}  // namespace litmus
