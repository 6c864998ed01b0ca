// Env helpers shared by every implementation: whole-file reads through the virtual interface,
// path joining, and the process-wide default Env. Thread-safe.
#include "litmus/format/env.h"

#include "local_env.h"

namespace litmus {

Env* Env::Default() {
  static Env* const env = new internal::LocalEnv();  // never destroyed: usable during exit
  return env;
}

StatusOr<std::string> Env::ReadFileToString(const std::string& path) {
  LITMUS_ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> file, NewRandomAccessFile(path));
  LITMUS_ASSIGN_OR_RETURN(uint64_t size, file->Size());
  std::string out;
  out.resize(static_cast<size_t>(size));
  LITMUS_ASSIGN_OR_RETURN(size_t n,
                          file->Read(0, std::as_writable_bytes(std::span(out.data(), out.size()))));
  out.resize(n);  // the file may have shrunk since Size(); a grown file is read up to `size`
  return out;
}

std::string Env::JoinPath(std::string_view root, std::string_view relative) {
  if (root.empty()) return std::string(relative);
  while (!relative.empty() && relative.front() == '/') relative.remove_prefix(1);
  if (relative.empty()) return std::string(root);
  std::string out(root);
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  if (out.back() != '/') out += '/';
  out += relative;
  return out;
}

}  // namespace litmus
