// A main() for a libFuzzer target built without libFuzzer (gcc, no sanitizers required): feeds
// every file of the directories or files named on the command line to LLVMFuzzerTestOneInput once,
// so a seed corpus runs as a regular regression test; a broken invariant aborts the process.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

void Replay(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

}  // namespace

int main(int argc, char** argv) {
  int replayed = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path path(argv[i]);
    if (!std::filesystem::exists(path)) {
      std::fprintf(stderr, "corpus replay: %s does not exist\n", argv[i]);
      return 2;
    }
    std::vector<std::filesystem::path> files;
    if (std::filesystem::is_directory(path)) {
      for (const auto& entry : std::filesystem::directory_iterator(path)) {
        if (entry.is_regular_file()) files.push_back(entry.path());
      }
    } else {
      files.push_back(path);
    }
    for (const std::filesystem::path& file : files) {
      Replay(file);
      ++replayed;
    }
  }
  if (replayed == 0) {
    std::fprintf(stderr, "corpus replay: no inputs\n");
    return 2;
  }
  std::printf("corpus replay: %d inputs, all passed\n", replayed);
  return 0;
}
