// Trial file naming: paths of event/index/collections files, parsing them back (with litmus's
// stricter device-name rule, see trial_layout.h), name validators and reduction tensor names.
// Pure functions; thread-safe.
#include "litmus/format/trial_layout.h"

#include <array>
#include <cstdio>

#include "utf8.h"

namespace litmus::layout {
namespace {

constexpr std::string_view kReductionsPrefix = "smdebug/reductions/";
constexpr std::string_view kAbsPrefix = "abs_";

std::string Padded(int64_t value, int width) {
  std::array<char, 32> buf{};
  const int n =
      std::snprintf(buf.data(), buf.size(), "%0*lld", width, static_cast<long long>(value));
  return std::string(buf.data(), static_cast<size_t>(n));
}

// smdebug's de-serialization of TF device names: '_' -> '/', '-' -> ':'.
std::string DeserializeWorker(std::string_view worker) {
  std::string out(worker);
  if (out.empty() || out.front() != '_') return out;
  for (char& c : out) {
    if (c == '_')
      c = '/';
    else if (c == '-')
      c = ':';
  }
  return out;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool IsValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    uint32_t code_point = 0;
    const size_t n = internal::DecodeUtf8(s, i, &code_point);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

}  // namespace

std::string EventFilePath(int64_t step, std::string_view worker) {
  const std::string s12 = Padded(step, 12);
  std::string out(kEventsDir);
  out += '/';
  out += s12;
  out += '/';
  out += s12;
  out += '_';
  out += worker;
  out += ".tfevents";
  return out;
}

std::string IndexFolder(int64_t step) {
  std::string out(kIndexDir);
  out += '/';
  out += Padded(step / kIndexFilesPerFolder, 9);
  return out;
}

std::string IndexFilePath(int64_t step, std::string_view worker) {
  std::string out = IndexFolder(step);
  out += '/';
  out += Padded(step, 12);
  out += '_';
  out += worker;
  out += ".json";
  return out;
}

std::string CollectionsFilePath(std::string_view worker) {
  std::string out(kCollectionsDir);
  out += '/';
  out += worker;
  out += "_collections.json";
  return out;
}

std::optional<IndexFileName> ParseIndexFilePath(std::string_view path) {
  // index/<folder>/<digits>_<worker>.json
  if (!path.starts_with(kIndexDir) || path.size() <= kIndexDir.size() ||
      path[kIndexDir.size()] != '/') {
    return std::nullopt;
  }
  path.remove_prefix(kIndexDir.size() + 1);
  const size_t slash = path.find('/');
  if (slash == 0 || slash == std::string_view::npos) return std::nullopt;
  std::string_view base = path.substr(slash + 1);
  if (base.find('/') != std::string_view::npos) return std::nullopt;
  constexpr std::string_view kJson = ".json";
  if (!base.ends_with(kJson)) return std::nullopt;
  base.remove_suffix(kJson.size());
  // Step: the digits before the first '_' (leading zeros allowed, value <= kMaxStep).
  size_t i = 0;
  int64_t step = 0;
  while (i < base.size() && IsDigit(base[i])) {
    step = step * 10 + (base[i] - '0');
    if (step > kMaxStep) return std::nullopt;
    ++i;
  }
  if (i == 0 || i >= base.size() || base[i] != '_') return std::nullopt;
  const std::string_view worker = base.substr(i + 1);
  if (worker.empty()) return std::nullopt;
  return IndexFileName{step, DeserializeWorker(worker)};
}

std::optional<std::string> ParseCollectionsFilePath(std::string_view path) {
  if (!path.starts_with(kCollectionsDir) || path.size() <= kCollectionsDir.size() ||
      path[kCollectionsDir.size()] != '/') {
    return std::nullopt;
  }
  std::string_view base = path.substr(kCollectionsDir.size() + 1);
  constexpr std::string_view kSuffix = "_collections.json";
  if (base.find('/') != std::string_view::npos || !base.ends_with(kSuffix)) return std::nullopt;
  base.remove_suffix(kSuffix.size());
  if (base.empty()) return std::nullopt;
  return DeserializeWorker(base);
}

Status ValidateWorkerName(std::string_view worker) {
  auto invalid = [&](std::string_view why) {
    return InvalidArgumentError("invalid worker name '" + std::string(worker) +
                                "': " + std::string(why));
  };
  if (worker.empty() || worker.size() > 255) return invalid("must be 1 to 255 characters");
  for (char c : worker) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || IsDigit(c) || c == '_' ||
                    c == '.' || c == '-';
    if (!ok) return invalid("only [A-Za-z0-9_.-] are allowed");
  }
  if (worker.front() == '_')
    return invalid("must not start with '_' (reserved for serialized TF devices)");
  if (worker.find("__") != std::string_view::npos) return invalid("must not contain \"__\"");
  return OkStatus();
}

Status ValidateTensorName(std::string_view name) {
  auto invalid = [&](std::string_view why) {
    return InvalidArgumentError("invalid tensor name '" + std::string(name.substr(0, 256)) +
                                "': " + std::string(why));
  };
  if (name.empty()) return invalid("must not be empty");
  if (name.size() > 4096) return invalid("longer than 4096 bytes");
  if (!IsValidUtf8(name)) return invalid("not valid UTF-8");
  if (name.find_first_of(std::string_view("\0\n\r", 3)) != std::string_view::npos) {
    return invalid("contains NUL or a line break");
  }
  if (name.front() == '/') return invalid("must not start with '/'");
  if (name.find("//") != std::string_view::npos) return invalid("must not contain \"//\"");
  if (name.starts_with(kReductionsPrefix))
    return invalid("the prefix smdebug/reductions/ is reserved");
  return OkStatus();
}

std::string_view ReductionName(Reduction r) {
  switch (r) {
    case Reduction::kMin:
      return "min";
    case Reduction::kMax:
      return "max";
    case Reduction::kMean:
      return "mean";
    case Reduction::kStd:
      return "std";
    case Reduction::kVariance:
      return "variance";
    case Reduction::kSum:
      return "sum";
    case Reduction::kProd:
      return "prod";
    case Reduction::kL1:
      return "l1";
    case Reduction::kL2:
      return "l2";
  }
  return "unknown";
}

std::optional<Reduction> ReductionFromName(std::string_view name) {
  if (name == "l1_norm") return Reduction::kL1;
  if (name == "l2_norm") return Reduction::kL2;
  for (Reduction r : kAllReductions) {
    if (ReductionName(r) == name) return r;
  }
  return std::nullopt;
}

std::string ReductionTensorName(Reduction r, bool abs, std::string_view tensor,
                                bool strip_colon_digits) {
  std::string rest(ReductionName(r));
  rest += '/';
  rest += tensor;
  if (strip_colon_digits) {
    // Python: re.sub(r":\d+", "", rest)
    std::string stripped;
    stripped.reserve(rest.size());
    for (size_t i = 0; i < rest.size();) {
      if (rest[i] == ':' && i + 1 < rest.size() && IsDigit(rest[i + 1])) {
        i += 1;
        while (i < rest.size() && IsDigit(rest[i])) ++i;
      } else {
        stripped += rest[i++];
      }
    }
    rest = std::move(stripped);
  }
  std::string out(kReductionsPrefix);
  if (abs) out += kAbsPrefix;
  out += rest;
  return out;
}

std::optional<ParsedReductionName> ParseReductionTensorName(std::string_view name) {
  // smdebug: rest = name.split(PREFIX)[1]; r_part, tensor = rest.split("/", 1);
  //          abs = "abs_" in r_part; op = r_part.split("abs_")[1] if abs else r_part.
  // Python's split()[1] stops at a second occurrence of the separator; mirrored below.
  const size_t at = name.find(kReductionsPrefix);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = name.substr(at + kReductionsPrefix.size());
  rest = rest.substr(0, rest.find(kReductionsPrefix));
  const size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  std::string_view r_part = rest.substr(0, slash);
  const std::string_view tensor = rest.substr(slash + 1);
  const size_t abs_at = r_part.find(kAbsPrefix);
  const bool abs = abs_at != std::string_view::npos;
  if (abs) {
    r_part.remove_prefix(abs_at + kAbsPrefix.size());
    r_part = r_part.substr(0, r_part.find(kAbsPrefix));
  }
  const std::optional<Reduction> r = ReductionFromName(r_part);
  if (!r || tensor.empty()) return std::nullopt;
  return ParsedReductionName{*r, abs, std::string(tensor)};
}

}  // namespace litmus::layout
