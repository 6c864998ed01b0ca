// Regex over PCRE2 with Python `re` semantics (regex.h). Compiled code is shared read-only;
// each thread matches with its own thread_local match data, so Search() needs no lock.
#include "python_regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <cstdint>
#include <string>
#include <utility>

namespace litmus {
namespace {

bool IsHex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool IsAsciiLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

Status BadPattern(std::string_view pattern, std::string_view why) {
  return InvalidArgumentError("regex '" + std::string(pattern) + "': " + std::string(why));
}

// Number of bytes of the UTF-8 sequence starting with lead byte `c` (1 for ASCII and for stray
// continuation bytes, which PCRE2 then rejects as invalid UTF-8).
size_t Utf8Length(unsigned char c) {
  if (c >= 0xF0 && c <= 0xF7) return 4;
  if (c >= 0xE0) return 3;
  if (c >= 0xC0) return 2;
  return 1;
}

class Translator {
 public:
  explicit Translator(std::string_view pattern) : p_(pattern) {}

  StatusOr<std::string> Run() {
    while (i_ < p_.size()) {
      Status s = in_class_ ? ClassChar() : OutsideChar();
      if (!s.ok()) return s;
    }
    return std::move(out_);
  }

 private:
  // Handles one escape at p_[i_] == '\\'. Letters Python does not know are errors (Python raises
  // "bad escape"); the ones PCRE2 reads differently are rewritten.
  Status Escape() {
    if (i_ + 1 >= p_.size()) return BadPattern(p_, "bad escape (end of pattern)");
    const char c = p_[i_ + 1];
    switch (c) {
      case 'Z':
        if (in_class_) return BadPattern(p_, "bad escape \\Z in a character class");
        out_ += "\\z";
        i_ += 2;
        return OkStatus();
      case 'A':
      case 'B':
        if (in_class_) return BadPattern(p_, std::string("bad escape \\") + c + " in a character class");
        break;
      case 'v':  // PCRE2's \v is the vertical-space class; Python's is VT.
        out_ += "\\x0b";
        i_ += 2;
        return OkStatus();
      case 'x': {
        if (i_ + 4 > p_.size() || !IsHex(p_[i_ + 2]) || !IsHex(p_[i_ + 3])) {
          return BadPattern(p_, "incomplete escape \\x");
        }
        out_.append(p_.substr(i_, 4));
        i_ += 4;
        return OkStatus();
      }
      case 'u':
      case 'U': {
        const size_t n = c == 'u' ? 4 : 8;
        if (i_ + 2 + n > p_.size()) return BadPattern(p_, std::string("incomplete escape \\") + c);
        uint32_t value = 0;
        for (size_t k = 0; k < n; ++k) {
          const char h = p_[i_ + 2 + k];
          if (!IsHex(h)) return BadPattern(p_, std::string("incomplete escape \\") + c);
          value = value * 16 + static_cast<uint32_t>(h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
        }
        if (value > 0x10FFFF) return BadPattern(p_, "bad escape \\U (beyond U+10FFFF)");
        out_ += "\\x{";
        out_.append(p_.substr(i_ + 2, n));
        out_ += "}";
        i_ += 2 + n;
        return OkStatus();
      }
      case 'N':
        return BadPattern(p_, "named Unicode escapes \\N{...} are not supported");
      case 'a': case 'b': case 'd': case 'D': case 'f': case 'n': case 'r': case 's': case 'S':
      case 't': case 'w': case 'W':
        break;
      default:
        if (IsAsciiLetter(c)) return BadPattern(p_, std::string("bad escape \\") + c);
        break;
    }
    // Copy the backslash and the whole (possibly multi-byte) escaped character.
    const size_t len = 1 + Utf8Length(static_cast<unsigned char>(c));
    out_.append(p_.substr(i_, len));
    i_ += len;
    return OkStatus();
  }

  Status ClassChar() {
    const char c = p_[i_];
    if (c == '\\') return Escape();
    if (c == '[') {  // literal in Python; PCRE2 would read "[:alpha:]" as a POSIX class
      out_ += "\\[";
      ++i_;
      return OkStatus();
    }
    if (c == ']') in_class_ = false;
    out_ += c;
    ++i_;
    return OkStatus();
  }

  Status OutsideChar() {
    const char c = p_[i_];
    switch (c) {
      case '\\':
        return Escape();
      case '[':
        out_ += '[';
        ++i_;
        if (i_ < p_.size() && p_[i_] == '^') {
          out_ += '^';
          ++i_;
        }
        if (i_ < p_.size() && p_[i_] == ']') {  // a leading ']' is literal
          out_ += "\\]";
          ++i_;
        }
        in_class_ = true;
        return OkStatus();
      case '(':
        return Group();
      case '{':
        return Brace();
      default:
        out_ += c;
        ++i_;
        return OkStatus();
    }
  }

  // `{,n}` means {0,n} in Python; PCRE2 10.42 would read it literally.
  Status Brace() {
    size_t j = i_ + 1;
    if (j < p_.size() && p_[j] == ',') {
      size_t k = j + 1;
      while (k < p_.size() && IsDigit(p_[k])) ++k;
      if (k > j + 1 && k < p_.size() && p_[k] == '}') {
        out_ += "{0";
        ++i_;
        return OkStatus();
      }
    }
    out_ += '{';
    ++i_;
    return OkStatus();
  }

  Status Group() {
    if (i_ + 1 < p_.size() && p_[i_ + 1] == '*') {
      return BadPattern(p_, "nothing to repeat at '(*' (PCRE verbs are not Python syntax)");
    }
    if (i_ + 1 >= p_.size() || p_[i_ + 1] != '?') {
      out_ += '(';
      ++i_;
      return OkStatus();
    }
    const std::string_view rest = p_.substr(i_ + 2);
    if (rest.starts_with("P<")) {
      out_ += "(?<";
      i_ += 4;
      return OkStatus();
    }
    if (rest.starts_with("P=")) {
      const size_t close = p_.find(')', i_ + 4);
      if (close == std::string_view::npos) return BadPattern(p_, "missing ) after (?P=name");
      out_ += "\\k<";
      out_.append(p_.substr(i_ + 4, close - (i_ + 4)));
      out_ += '>';
      i_ = close + 1;
      return OkStatus();
    }
    if (rest.starts_with("P")) return BadPattern(p_, "unknown extension (?P");
    if (rest.starts_with("<=") || rest.starts_with("<!") || rest.starts_with(":") ||
        rest.starts_with("=") || rest.starts_with("!") || rest.starts_with("#") ||
        rest.starts_with("(") || rest.starts_with(">")) {
      out_ += "(?";
      i_ += 2;
      return OkStatus();
    }
    return Flags();
  }

  // Inline flags "(?imsx)" or scoped "(?imsx-imsx:...)". Python also has a (ASCII), L (locale)
  // and u (Unicode, the default for str patterns): u is dropped, a and L are rejected.
  Status Flags() {
    size_t j = i_ + 2;
    std::string flags;
    while (j < p_.size() && (IsAsciiLetter(p_[j]) || p_[j] == '-')) flags += p_[j++];
    if (j >= p_.size() || (p_[j] != ')' && p_[j] != ':') || flags.empty()) {
      return BadPattern(p_, "unknown extension (?" + std::string(p_.substr(i_ + 2, 1)));
    }
    std::string kept;
    for (const char f : flags) {
      switch (f) {
        case 'i': case 'm': case 's': case 'x': case '-':
          kept += f;
          break;
        case 'u':
          break;
        case 'a':
        case 'L':
          return BadPattern(p_, std::string("inline flag (?") + f + ") is not supported");
        default:
          return BadPattern(p_, std::string("unknown flag ") + f);
      }
    }
    const bool scoped = p_[j] == ':';
    i_ = j + 1;
    if (kept.empty() || kept == "-") {
      if (scoped) out_ += "(?:";
      return OkStatus();
    }
    out_ += "(?" + kept + (scoped ? ":" : ")");
    return OkStatus();
  }

  std::string_view p_;
  size_t i_ = 0;
  bool in_class_ = false;
  std::string out_;
};

// One match-data block per thread, large enough for a yes/no answer with any pattern
// (pcre2_match returns 0 = "matched, ovector too small" when there are more groups).
pcre2_match_data* ThreadMatchData() {
  struct Holder {
    pcre2_match_data* data = pcre2_match_data_create(1, nullptr);
    ~Holder() { pcre2_match_data_free(data); }
  };
  thread_local Holder holder;
  return holder.data;
}

}  // namespace

struct Regex::Code {
  pcre2_code* code = nullptr;
  ~Code() { pcre2_code_free(code); }
};

StatusOr<std::string> TranslatePythonRegex(std::string_view pattern) {
  return Translator(pattern).Run();
}

StatusOr<std::shared_ptr<const Regex>> Regex::Compile(std::string_view pattern) {
  LITMUS_ASSIGN_OR_RETURN(std::string translated, TranslatePythonRegex(pattern));
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  auto code = std::make_unique<Code>();
  code->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()), translated.size(),
                             PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &error_code,
                             &error_offset, nullptr);
  if (code->code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error_code, message, sizeof(message));
    return BadPattern(pattern, std::string(reinterpret_cast<const char*>(message)) + " at offset " +
                                   std::to_string(error_offset) + " of '" + translated + "'");
  }
  // JIT is an optimisation only: without it (unsupported CPU, no executable memory) the
  // interpreter gives the same answers.
  (void)pcre2_jit_compile(code->code, PCRE2_JIT_COMPLETE);
  return std::shared_ptr<const Regex>(
      new Regex(std::string(pattern), std::move(translated), std::move(code)));
}

Regex::Regex(std::string pattern, std::string translated, std::unique_ptr<Code> code)
    : pattern_(std::move(pattern)), translated_(std::move(translated)), code_(std::move(code)) {}

Regex::~Regex() = default;

bool Regex::Search(std::string_view subject) const {
  pcre2_match_data* data = ThreadMatchData();
  const auto* s = reinterpret_cast<PCRE2_SPTR>(subject.data());
  int rc = pcre2_match(code_->code, s, subject.size(), 0, 0, data, nullptr);
  if (rc == PCRE2_ERROR_JIT_STACKLIMIT) {
    // The default JIT stack is small; the interpreter uses the heap and has larger limits.
    rc = pcre2_match(code_->code, s, subject.size(), 0, PCRE2_NO_JIT, data, nullptr);
  }
  return rc >= 0;
}

}  // namespace litmus
