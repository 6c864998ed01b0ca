// Reading what a `litmus run` job wrote, for the end-to-end tests: a JSON file (status.json, a
// rule report) and the events of <out>/events.jsonl, one JSON object per line. Header-only.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace litmus::testing {

inline nlohmann::json ReadJson(const std::filesystem::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

inline std::vector<nlohmann::json> ReadEvents(const std::filesystem::path& out) {
  std::vector<nlohmann::json> events;
  std::ifstream in(out / "events.jsonl");
  for (std::string line; std::getline(in, line);) events.push_back(nlohmann::json::parse(line));
  return events;
}

}  // namespace litmus::testing
