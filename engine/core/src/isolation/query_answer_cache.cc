// QueryAnswerCache: step-query answers shared by the rules of one runner call.
#include "isolation/query_answer_cache.h"

#include <cstring>
#include <utility>

namespace litmus::isolation {

std::string_view QueryAnswerCache::Key(const Trial* trial, std::string_view query) {
  key_.resize(sizeof(trial) + query.size());
  std::memcpy(key_.data(), &trial, sizeof(trial));
  if (!query.empty()) std::memcpy(key_.data() + sizeof(trial), query.data(), query.size());
  return key_;
}

const std::string* QueryAnswerCache::Find(const Trial* trial, std::string_view query) {
  const auto found = answers_.find(Key(trial, query));
  return found == answers_.end() ? nullptr : &found->second;
}

void QueryAnswerCache::Add(const Trial* trial, std::string_view query, std::string answer) {
  answers_.try_emplace(std::string(Key(trial, query)), std::move(answer));
}

}  // namespace litmus::isolation
