// Index parser test inputs (index_json_inputs.h).
#include "support/index_json_inputs.h"

#include <filesystem>

#include "support/temp_dir.h"

namespace litmus::testing {

std::vector<std::string> FixtureIndexFileTexts() {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(FixturePath(""))) {
    const std::string path = entry.path().string();
    if (entry.is_regular_file() && path.find("/index/") != std::string::npos && entry.path().extension() == ".json") {
      out.push_back(ReadWholeFile(entry.path()));
    }
  }
  return out;
}

std::string MutatedJson(std::string json, const std::vector<std::string>& tokens, std::mt19937_64& rng) {
  const int edits = 1 + static_cast<int>(rng() % 3);
  for (int e = 0; e < edits && !json.empty(); ++e) {
    const size_t at = rng() % json.size();
    switch (rng() % 4) {
      case 0: json.erase(at, 1 + rng() % 8); break;
      case 1: json.insert(at, tokens[rng() % tokens.size()]); break;
      case 2: json.insert(at, json.substr(at, 1 + rng() % 40)); break;
      default: json[at] = "{}[],:\"0a -"[rng() % 12]; break;
    }
  }
  return json;
}

}  // namespace litmus::testing
