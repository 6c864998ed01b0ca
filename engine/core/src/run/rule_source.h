// RuleSourceCopies: local copies of rule sources given as s3:// objects (SageMaker's
// source_s3_uri), so the Python rule host and its worker processes load an S3 rule exactly as a
// local file. Each object is fetched once, through the job's Env (the S3 client, credentials,
// region and endpoint of the trial's own S3 access), into a private folder (mode 0700 under
// $TMPDIR) that the destructor removes. Thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "litmus/format/env.h"
#include "litmus/status.h"

namespace litmus {

class RuleSourceCopies {
 public:
  // Sources above this size are refused: a rule file is source code, not data.
  static constexpr uint64_t kMaxBytes = 16 << 20;

  RuleSourceCopies() = default;
  RuleSourceCopies(const RuleSourceCopies&) = delete;
  RuleSourceCopies& operator=(const RuleSourceCopies&) = delete;
  ~RuleSourceCopies();  // removes the folder and every copy in it

  // The local path of a copy of `uri` (s3://bucket/key), fetched through `env` on the first call
  // for that URI. The copy keeps the key's file name, so tracebacks read as for a local file.
  // Errors name the URI: NotFound ("s3://b/k.py: no such object"), FailedPrecondition (access
  // denied, wrong region), Unavailable (endpoint unreachable after retries), InvalidArgument
  // (not an object URI, too large); Internal if the local copy cannot be written.
  StatusOr<std::string> Fetch(Env* env, const std::string& uri);

 private:
  Status MakeFolder();

  std::string folder_;                       // empty until the first fetch
  std::map<std::string, std::string> copies_;  // URI -> local path
};

}  // namespace litmus
