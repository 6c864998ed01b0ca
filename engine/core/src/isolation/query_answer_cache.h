// QueryAnswerCache: the answers to workers' step queries that depend only on a trial and the
// query's bytes (tensor names at a step, a step's mode, a mode step's global step), kept for the
// rules of one runner call. Twenty rules of a job mostly ask the same questions about the same
// steps; each answer is computed and encoded once, then copied. Valid only while the trials do
// not change: the runner makes one per call (no refresh happens while it sends the call).
// Thread-compatible.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace litmus {

class Trial;

namespace isolation {

class QueryAnswerCache {
 public:
  // The answer stored for `query` about `trial`, or null.
  const std::string* Find(const Trial* trial, std::string_view query);
  // Stores `answer` (an answer of IsolatedRule::Answer with LITMUS_OK and no error message).
  void Add(const Trial* trial, std::string_view query, std::string answer);
  size_t size() const { return answers_.size(); }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  // The key: the trial's address, then the query's bytes (a query names its trial by the rule's
  // own numbering, which differs between rules).
  std::string_view Key(const Trial* trial, std::string_view query);

  std::unordered_map<std::string, std::string, Hash, std::equal_to<>> answers_;
  std::string key_;  // reused by Key
};

}  // namespace isolation
}  // namespace litmus
