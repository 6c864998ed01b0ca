// Regex: Python-`re`-compatible pattern matching over PCRE2 (UTF-8, Unicode classes), as smdebug
// uses for collection include_regex and rule tensor selection: Search() is `re.search`, an
// unanchored partial match. Python-only syntax is translated; what cannot be is rejected at
// Compile(). A compiled Regex is immutable; Search() is thread-safe (match data per thread).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "litmus/status.h"

namespace litmus {

class Regex {
 public:
  // Compiles a Python `re` pattern. Translations: `(?P<name>` -> `(?<name>`, `(?P=name)` ->
  // `\k<name>`, `\Z` -> `\z`, `\v` -> `\x0b`, `\uXXXX`/`\UXXXXXXXX` -> `\x{...}`, `{,n}` ->
  // `{0,n}`, a literal `[` inside a class -> `\[`. InvalidArgument (naming the pattern) for a
  // syntax error, an escape Python rejects (e.g. `\p`, `\K`), `\N{...}`, or the flags `(?a)` /
  // `(?L)`.
  static StatusOr<std::shared_ptr<const Regex>> Compile(std::string_view pattern);

  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // True if the pattern matches anywhere in `subject` (Python re.search). Invalid UTF-8 in the
  // subject never matches across the invalid bytes and is not an error.
  bool Search(std::string_view subject) const;

  // The pattern as given to Compile() and as handed to PCRE2 after translation.
  const std::string& pattern() const { return pattern_; }
  const std::string& translated() const { return translated_; }

 private:
  struct Code;
  Regex(std::string pattern, std::string translated, std::unique_ptr<Code> code);

  std::string pattern_;
  std::string translated_;
  std::unique_ptr<Code> code_;
};

// Only the translation step of Regex::Compile (exposed for tests).
StatusOr<std::string> TranslatePythonRegex(std::string_view pattern);

}  // namespace litmus
