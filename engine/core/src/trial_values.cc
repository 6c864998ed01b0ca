// WriteTrialValues and DescribeTensorValue: `litmus inspect --values`. Statistics come from
// reductions.h (ComputeReductions, CountNonFinite), the same code rules and the JSON document use.
#include "litmus/engine/trial_values.h"

#include <fmt/format.h>

#include <array>
#include <nlohmann/json.hpp>

#include "litmus/engine/reductions.h"
#include "litmus/engine/trial_document.h"
#include "litmus/engine/trial_summary.h"

namespace litmus {
namespace {

// Shortest text that reads back as the same value of the element's own precision.
std::string RealText(double v, DType dtype) {
  if (dtype == DType::kFloat32 || dtype == DType::kFloat16 || dtype == DType::kComplex64) {
    return fmt::format("{}", static_cast<float>(v));
  }
  return fmt::format("{}", v);
}

std::string ElementText(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kFloat16:
    case DType::kFloat32:
    case DType::kFloat64:
      return RealText(t.ElementAsDouble(i), t.dtype());
    case DType::kComplex64:
    case DType::kComplex128: {
      const std::complex<double> z = t.ElementAsComplex(i);
      const std::string im = RealText(z.imag(), t.dtype());
      return fmt::format("({}{}{}j)", RealText(z.real(), t.dtype()), im.front() == '-' ? "" : "+", im);
    }
    case DType::kBool:
      return t.ElementAsDouble(i) != 0 ? "true" : "false";
    case DType::kInt8: return std::to_string(t.as<int8_t>()[i]);
    case DType::kInt16: return std::to_string(t.as<int16_t>()[i]);
    case DType::kInt32: return std::to_string(t.as<int32_t>()[i]);
    case DType::kInt64: return std::to_string(t.as<int64_t>()[i]);
    case DType::kUInt8: return std::to_string(t.as<uint8_t>()[i]);
    case DType::kUInt16: return std::to_string(t.as<uint16_t>()[i]);
    case DType::kUInt32: return std::to_string(t.as<uint32_t>()[i]);
    case DType::kUInt64: return std::to_string(t.as<uint64_t>()[i]);
    case DType::kInvalid:
    case DType::kString:
      return nlohmann::json(t.strings()[static_cast<size_t>(i)])
          .dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
  }
  return "?";
}

std::string StatisticText(const StatusOr<double>& value) {
  return value.ok() ? fmt::format("{:.7g}", *value) : "n/a";
}

}  // namespace

std::string DescribeTensorValue(const Tensor& t, int64_t max_listed_values) {
  std::string out = t.is_string() ? "str" : std::string(DTypeName(t.dtype()));
  out += ' ';
  out += ShapeText(t.shape());
  if (t.num_elements() <= max_listed_values) {
    out += " [";
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      if (i) out += ", ";
      out += ElementText(t, i);
    }
    return out + "]";
  }
  out += fmt::format(" {} elements", t.num_elements());
  if (t.is_string()) return out;
  // min and max are undefined for complex tensors (reductions.h): shown as n/a.
  static constexpr std::array<ReductionRequest, 3> kStatistics = {
      ReductionRequest{layout::Reduction::kMin, false}, ReductionRequest{layout::Reduction::kMax, false},
      ReductionRequest{layout::Reduction::kMean, false}};
  const std::vector<StatusOr<double>> stats = ComputeReductions(t, kStatistics);
  out += fmt::format(": min {} max {} mean {}", StatisticText(stats[0]), StatisticText(stats[1]),
                     StatisticText(stats[2]));
  if (IsFloating(t.dtype()) || IsComplex(t.dtype())) {
    const NonFiniteCounts counts = CountNonFinite(t);
    out += fmt::format(", nan {}, +inf {}, -inf {}", counts.nan, counts.posinf, counts.neginf);
  }
  return out;
}

Status WriteTensorValueLines(const Trial& trial, const std::string& name, std::span<const int64_t> steps,
                             bool several_workers, const TrialValuesOptions& options, std::ostream& out) {
  for (int64_t step : steps) {
    const std::vector<TensorEntry> entries = trial.Entries(name, step);
    for (const TensorEntry& entry : entries) {
      std::string line = fmt::format("  step {}", step);
      if (entry.mode != Mode::kGlobal) line += fmt::format(" ({} {})", ModeName(entry.mode), entry.mode_step);
      if (several_workers || entries.size() > 1) line += fmt::format(" {}", entry.worker);
      line += ": ";
      StatusOr<TensorPtr> value = trial.Value(name, step, Mode::kGlobal, entry.worker);
      if (value.ok()) {
        line += DescribeTensorValue(**value, options.max_listed_values);
      } else if (GetTrialError(value.status())) {
        line += fmt::format("<{}>", ErrorClassName(value.status()));
      } else {
        return value.status();
      }
      out << line << "\n";
    }
    trial.Release({{name, step}});
    if (!out.good()) return UnavailableError("cannot write the listing (output closed or full)");
  }
  return OkStatus();
}

Status WriteTrialValues(const SelectedTrial& selected, const TrialValuesOptions& options, std::ostream& out) {
  const Trial& trial = selected.trial();
  const bool several_workers = trial.workers().size() > 1;
  for (const std::string& name : selected.tensor_names()) {
    out << name << "\n";
    const std::vector<int64_t> steps = selected.FilterSteps(trial.TensorSteps(name, /*include_incomplete=*/true));
    LITMUS_RETURN_IF_ERROR(WriteTensorValueLines(trial, name, steps, several_workers, options, out));
  }
  out.flush();
  return out.good() ? OkStatus() : UnavailableError("cannot write the listing (output closed or full)");
}

}  // namespace litmus
