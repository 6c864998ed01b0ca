// libFuzzer target for the trial's JSON parsers: every input is parsed both as an index file
// (ParseIndexJson) and as a collections file (ParseCollectionsJson, then MakeCollection, which
// compiles the include_regex patterns through the Python-regex translator and PCRE2, and runs
// them once). Invariants checked: parsing never crashes, the streaming index parser (and its
// fast path for smdebug's layout, whenever it takes the input, and the catalog's parse into a
// view of the text) returns exactly what the DOM-based reference parser does
// (tests/support/index_json_reference.h), an
// accepted index file has a safe event_file_name and in-range offsets, and accepted reductions
// parse again.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "canonical_index_parser.h"
#include "collections_parser.h"
#include "index_file_view.h"
#include "index_parser.h"
#include "python_regex.h"
#include "support/index_json_reference.h"

namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  litmus::StatusOr<litmus::IndexFile> index = litmus::ParseIndexJson(text, "fuzz.json");
  const litmus::StatusOr<litmus::IndexFile> reference = litmus::testing::ParseIndexJsonReference(text, "fuzz.json");
  Check(litmus::testing::DescribeIndexResult(index) == litmus::testing::DescribeIndexResult(reference));
  if (const std::optional<litmus::IndexFile> canonical = litmus::ParseCanonicalIndexJson(text)) {
    Check(litmus::testing::DescribeIndexResult(litmus::StatusOr<litmus::IndexFile>(*canonical)) ==
          litmus::testing::DescribeIndexResult(reference));
  }
  {
    const litmus::StatusOr<litmus::IndexFileView> view = litmus::ParseIndexFileView(std::string(text), "fuzz.json");
    Check(litmus::testing::DescribeIndexResult(view.ok() ? litmus::StatusOr<litmus::IndexFile>(view->ToIndexFile())
                                                         : litmus::StatusOr<litmus::IndexFile>(view.status())) ==
          litmus::testing::DescribeIndexResult(reference));
  }
  if (index.ok()) {
    Check(index->mode_step >= 0);
    Check(!index->event_file_name || litmus::SafeRelativePath(*index->event_file_name));
    Check(index->tensor_payload.empty() || index->event_file_name.has_value());
    for (const litmus::IndexEntry& e : index->tensor_payload) {
      Check(e.length >= 16 && e.start_idx + e.length >= e.start_idx);
    }
  } else {
    Check(index.status().message().find("fuzz.json") != std::string::npos);
  }

  litmus::StatusOr<litmus::CollectionsFile> collections = litmus::ParseCollectionsJson(text, "fuzz.json");
  if (collections.ok()) {
    Check(collections->num_workers >= 1);
    for (const litmus::CollectionJson& json : collections->collections) {
      if (json.reduction_config) Check(litmus::ParseReductionList(json.reduction_config->reductions).ok());
      litmus::Status regex_status;
      const litmus::Collection c = litmus::MakeCollection(json, &regex_status);
      for (const auto& regex : c.compiled_regex) (void)regex->Search(json.name);
    }
  }
  return 0;
}
