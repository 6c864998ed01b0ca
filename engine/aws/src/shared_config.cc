// AWS shared configuration files (shared_config.h).
#include "shared_config.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace litmus::aws::internal {
namespace {

std::string Trim(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return "";
  const size_t last = text.find_last_not_of(" \t\r");
  return std::string(text.substr(first, last - first + 1));
}

std::string EnvOr(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::string(value) : fallback;
}

std::string HomeFile(const char* relative) {
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') return "";
  return std::string(home) + "/" + relative;
}

// "~/x" -> "$HOME/x", as the AWS CLI expands these variables.
std::string ExpandHome(std::string path) {
  if (path.starts_with("~/")) {
    const char* home = std::getenv("HOME");
    if (home != nullptr) path = std::string(home) + path.substr(1);
  }
  return path;
}

}  // namespace

std::string SelectedProfileName() {
  return EnvOr("AWS_PROFILE", EnvOr("AWS_DEFAULT_PROFILE", "default"));
}

bool ProfileNamedExplicitly() {
  for (const char* name : {"AWS_PROFILE", "AWS_DEFAULT_PROFILE"}) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0') return true;
  }
  return false;
}

std::string CredentialsFilePath() {
  return ExpandHome(EnvOr("AWS_SHARED_CREDENTIALS_FILE", HomeFile(".aws/credentials")));
}

std::string ConfigFilePath() { return ExpandHome(EnvOr("AWS_CONFIG_FILE", HomeFile(".aws/config"))); }

std::map<std::string, Profile> ParseIni(const std::string& text, bool config_style) {
  std::map<std::string, Profile> sections;
  std::istringstream lines(text);
  std::string line;
  Profile* current = nullptr;
  while (std::getline(lines, line)) {
    if (!line.empty() && (line[0] == ' ' || line[0] == '\t')) continue;  // sub-section values
    const std::string trimmed = Trim(line);
    if (trimmed.empty() || trimmed[0] == '#' || trimmed[0] == ';') continue;
    if (trimmed.front() == '[') {
      const size_t close = trimmed.find(']');
      current = nullptr;
      if (close == std::string::npos) continue;
      std::string name = Trim(std::string_view(trimmed).substr(1, close - 1));
      if (config_style) {
        if (name.starts_with("profile ") || name.starts_with("profile\t")) {
          name = Trim(std::string_view(name).substr(8));
        } else if (name != "default") {
          continue;  // [sso-session x], [services x]: not profiles
        }
      }
      current = &sections[name];
      continue;
    }
    if (current == nullptr) continue;
    const size_t eq = trimmed.find('=');
    if (eq == std::string::npos) continue;
    std::string key = Trim(std::string_view(trimmed).substr(0, eq));
    std::string value = Trim(std::string_view(trimmed).substr(eq + 1));
    // No inline comments: like botocore's parser, '#' and ';' inside a value are part of it.
    (*current)[std::move(key)] = std::move(value);
  }
  return sections;
}

std::optional<Profile> ReadProfile(const std::string& path, const std::string& name, bool config_style) {
  if (path.empty()) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::map<std::string, Profile> sections = ParseIni(buffer.str(), config_style);
  const auto it = sections.find(name);
  if (it == sections.end()) return std::nullopt;
  return it->second;
}

}  // namespace litmus::aws::internal
