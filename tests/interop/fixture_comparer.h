// The comparison behind the interop tests: a trial read by litmus, described as the
// `inspect --json` document, compared field by field with what smdebug's own reader returned
// (tests/fixtures/smdebug/<fixture>.expected.json). Shared by tests/interop (local folders) and
// tests/s3 (the same fixtures uploaded to a bucket). Not thread-safe; call from the test thread.
#pragma once

#include <map>
#include <string>

#include "litmus/engine/trial.h"
#include "litmus/format/env.h"

namespace litmus::testing {

struct FixtureComparison {
  int compared_values = 0;
  int compared_reductions = 0;
  std::map<std::string, int> divergences;  // documented divergence -> how often it applied
};

// Compares `trial` (opened through `env`, which is used again to re-read record bytes) with the
// expected.json of `fixture`, adding a GoogleTest failure for every difference that is not one
// of docs/compatibility.md's divergences (each recognised by a condition checked on the data,
// never by name, and our value then checked another way).
FixtureComparison CompareFixtureWithExpected(const std::string& fixture, const Trial& trial, Env* env);

}  // namespace litmus::testing
