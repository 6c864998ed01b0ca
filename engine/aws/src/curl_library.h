// CurlLibrary: libcurl's functions, loaded (dlopen) the first time a transport needs them.
// libcurl brings ~30 libraries of its own (TLS, Kerberos, LDAP, SSH, HTTP/2, IDN, ...); linked
// into the litmus binary, mapping and relocating them took ~4 ms of every process start (a
// program linked to libcurl alone: 4.8 ms against 0.5 ms without), although only S3 and the
// HTTP actions use it. Loaded on demand, jobs on local trials never map it.
// Thread-safe.
#pragma once

#include <curl/curl.h>

#include "litmus/status.h"

namespace litmus::aws {

// The libcurl entry points the transport calls (same signatures as <curl/curl.h>).
struct CurlLibrary {
  decltype(&curl_global_init) global_init;
  decltype(&curl_easy_init) easy_init;
  decltype(&curl_easy_cleanup) easy_cleanup;
  decltype(&curl_easy_reset) easy_reset;
  decltype(&curl_easy_setopt) easy_setopt;
  decltype(&curl_easy_perform) easy_perform;
  decltype(&curl_easy_getinfo) easy_getinfo;
  decltype(&curl_easy_strerror) easy_strerror;
  decltype(&curl_slist_append) slist_append;
  decltype(&curl_slist_free_all) slist_free_all;
};

// The soname loaded: the one Debian's libcurl4 package installs (the library's ABI 4, stable
// since 2006).
inline constexpr const char* kCurlSoname = "libcurl.so.4";

// libcurl, loaded and initialised (curl_global_init) on the first call and kept for the
// process's life; FailedPrecondition naming the library and the loader's reason when it cannot
// be loaded (the answer is kept: every later call returns it too).
StatusOr<const CurlLibrary*> LoadCurlLibrary();

}  // namespace litmus::aws
