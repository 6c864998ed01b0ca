// PythonRuleHostPath: see python_rule_host_path.h.
#include "plugin/python_rule_host_path.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <vector>

namespace litmus {
namespace fs = std::filesystem;

StatusOr<std::string> PythonRuleHostPath() {
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("LITMUS_PYTHON_RULE_HOST"); env != nullptr && *env != '\0') {
    candidates.emplace_back(env);
  } else {
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
#if defined(LITMUS_BUILD_DIR) && defined(LITMUS_BUILD_PYTHON_RULE_HOST)
      // Only a binary running from the build tree uses the build tree's host (as for plugins).
      const fs::path build = fs::weakly_canonical(LITMUS_BUILD_DIR, ec);
      const auto [end, unused] = std::mismatch(build.begin(), build.end(), exe.begin(), exe.end());
      if (!ec && end == build.end()) candidates.emplace_back(LITMUS_BUILD_PYTHON_RULE_HOST);
#endif
      candidates.push_back(exe.parent_path() / ".." / LITMUS_INSTALL_PYTHON_SUBDIR / "python_rule_host.so");
    }
  }
  std::string tried;
  for (const fs::path& candidate : candidates) {
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec)) return fs::weakly_canonical(candidate, ec).string();
    tried += (tried.empty() ? "" : ", ") + candidate.lexically_normal().string();
  }
  return NotFoundError("Python rules need python_rule_host.so, which this litmus does not have (looked for " +
                       (tried.empty() ? std::string("nothing") : tried) +
                       "); build litmus with pybind11-dev, python3-dev and python3-numpy installed "
                       "(LITMUS_BUILD_PYTHON, docs/python.md) or set LITMUS_PYTHON_RULE_HOST");
}

}  // namespace litmus
