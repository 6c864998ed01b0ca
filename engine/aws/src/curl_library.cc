// LoadCurlLibrary (curl_library.h): dlopen of libcurl and dlsym of each entry point, once.
#include "curl_library.h"

#include <dlfcn.h>

#include <string>
#include <type_traits>

namespace litmus::aws {
namespace {

StatusOr<const CurlLibrary*> Load() {
  // (Never closed: handles and threads may use it until the process exits.)
  void* handle = dlopen(kCurlSoname, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return FailedPreconditionError(std::string("cannot load ") + kCurlSoname + " (HTTP and S3 need libcurl; on " +
                                   "Debian: apt-get install libcurl4): " + (why != nullptr ? why : "unknown error"));
  }
  static CurlLibrary library;
  Status missing = OkStatus();
  const auto resolve = [&](auto& function, const char* name) {
    function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(dlsym(handle, name));
    if (function == nullptr && missing.ok()) {
      missing = FailedPreconditionError(std::string(kCurlSoname) + " has no " + name + ": not a libcurl of ABI 4");
    }
  };
  resolve(library.global_init, "curl_global_init");
  resolve(library.easy_init, "curl_easy_init");
  resolve(library.easy_cleanup, "curl_easy_cleanup");
  resolve(library.easy_reset, "curl_easy_reset");
  resolve(library.easy_setopt, "curl_easy_setopt");
  resolve(library.easy_perform, "curl_easy_perform");
  resolve(library.easy_getinfo, "curl_easy_getinfo");
  resolve(library.easy_strerror, "curl_easy_strerror");
  resolve(library.slist_append, "curl_slist_append");
  resolve(library.slist_free_all, "curl_slist_free_all");
  if (!missing.ok()) return missing;
  if (const CURLcode code = library.global_init(CURL_GLOBAL_DEFAULT); code != CURLE_OK) {
    return FailedPreconditionError(std::string("curl_global_init failed: ") + library.easy_strerror(code));
  }
  return &library;
}

}  // namespace

StatusOr<const CurlLibrary*> LoadCurlLibrary() {
  static const StatusOr<const CurlLibrary*> loaded = Load();
  return loaded;
}

}  // namespace litmus::aws
