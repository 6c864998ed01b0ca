// The fixture comparison (fixture_comparer.h): the only differences allowed are the ones
// docs/compatibility.md lists; each is recognised by a condition checked on the data (never by
// name), and our value is then checked another way.
#include "interop/fixture_comparer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <span>

#include "litmus/engine/trial_document.h"
#include "litmus/format/tfrecord.h"
#include "support/temp_dir.h"

namespace litmus::testing {
namespace {

using Json = nlohmann::json;

// The divergences of docs/compatibility.md (section names in comments).
enum class Divergence {
  kRealPayloadCrc,        // "Real payload CRCs": smdebug raises NameError
  kUnreadableDtype,       // "dtypes smdebug cannot read": KeyError
  kInt8AsUint8,           // "int8 read back as uint8"
  kEmptyTensor,           // "Empty tensors"
  kStringReductions,      // "Reductions of strings"
  kComplexReductions,     // "Reductions of complex tensors"
  kMatrixNorm,            // "l1/l2 are element-wise norms" (2-D: matrix norms in smdebug)
  kNormRank,              // same section: 0-d and >=3-D raise in smdebug
  kHalfPrecision,         // "float64 accumulation" (float16 arithmetic in smdebug)
  kFloat32Overflow,       // same section: float32 results overflow to inf in smdebug
  kIntegerWrap,           // "abs in the double domain" / "float64 accumulation": int64 wraps
  kStringModeStepCompare, // "value_via_mode_step_matches for strings"
};

const char* DivergenceName(Divergence d) {
  switch (d) {
    case Divergence::kRealPayloadCrc: return "real payload CRC (smdebug NameError)";
    case Divergence::kUnreadableDtype: return "dtype smdebug cannot read (KeyError)";
    case Divergence::kInt8AsUint8: return "int8 read back as uint8 by smdebug";
    case Divergence::kEmptyTensor: return "empty tensor (smdebug raises or returns None)";
    case Divergence::kStringReductions: return "reductions of strings";
    case Divergence::kComplexReductions: return "non-abs reductions of complex tensors";
    case Divergence::kMatrixNorm: return "matrix norm for 2-D l1/l2 in smdebug";
    case Divergence::kNormRank: return "smdebug l1/l2 raise for 0-d and >=3-D";
    case Divergence::kHalfPrecision: return "float16 arithmetic in smdebug";
    case Divergence::kFloat32Overflow: return "float32 result overflows to inf in smdebug";
    case Divergence::kIntegerWrap: return "integer abs or product wraps in smdebug";
    case Divergence::kStringModeStepCompare: return "smdebug cannot compare string arrays";
  }
  return "?";
}

Json LoadJson(const std::filesystem::path& path) {
  std::ifstream in(path);
  return Json::parse(in);
}

// A JSON number or "nan"/"inf"/"-inf" as double; booleans as 0/1.
std::optional<double> AsDouble(const Json& j) {
  if (j.is_boolean()) return j.get<bool>() ? 1.0 : 0.0;
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    const auto s = j.get<std::string>();
    if (s == "nan") return std::nan("");
    if (s == "inf") return INFINITY;
    if (s == "-inf") return -INFINITY;
  }
  return std::nullopt;
}

bool IsError(const Json& j) { return j.is_object() && j.contains("error"); }

// Reference reductions with litmus's semantics, computed plainly in double from a small list of
// values (the test oracle for tensors whose values expected.json lists).
std::optional<double> ReferenceReduction(const std::vector<std::complex<double>>& xs, bool complex,
                                         const std::string& key) {
  const bool abs = key.rfind("abs_", 0) == 0;
  const std::string r = abs ? key.substr(4) : key;
  if (complex && !abs && r != "l1" && r != "l2") return std::nullopt;  // unsupported
  std::vector<double> v;
  for (const auto& z : xs) v.push_back(complex || abs ? std::abs(z) : z.real());
  const double n = static_cast<double>(v.size());
  double sum = 0, prod = 1, l1 = 0, sq = 0;
  for (double x : v) sum += x, prod *= x, l1 += std::fabs(x), sq += x * x;
  if (r == "sum") return sum;
  if (r == "prod") return prod;
  if (r == "l1") return l1;
  if (r == "l2") return std::sqrt(sq);
  if (v.empty()) {
    if (r == "min" || r == "max") return std::nullopt;
    return std::nan("");
  }
  const double mean = sum / n;
  if (r == "mean") return mean;
  double var = 0;
  for (double x : v) var += (x - mean) * (x - mean);
  var /= n;
  if (r == "variance") return var;
  if (r == "std") return std::sqrt(var);
  double lo = v[0], hi = v[0];
  bool nan = false;
  for (double x : v) nan |= std::isnan(x), lo = std::min(lo, x), hi = std::max(hi, x);
  if (nan) return std::nan("");
  if (r == "min") return lo;
  if (r == "max") return hi;
  ADD_FAILURE() << "unknown reduction " << key;
  return std::nullopt;
}

bool Close(double ours, double expected, double abs_tol, double rel_tol) {
  if (std::isnan(ours) || std::isnan(expected)) return std::isnan(ours) && std::isnan(expected);
  if (std::isinf(ours) || std::isinf(expected)) return ours == expected;
  return std::fabs(ours - expected) <= abs_tol + rel_tol * std::fabs(expected);
}

class FixtureComparer {
 public:
  FixtureComparer(std::string fixture, const Trial& trial, Env* env)
      : fixture_(std::move(fixture)), trial_(trial), env_(env) {}

  void Compare(const Json& expected, const Json& ours) {
    for (const auto& [key, value] : expected.items()) {
      if (key == "schema" || key == "smdebug_version" || key == "rule_outcomes") continue;
      ASSERT_TRUE(ours.contains(key)) << fixture_ << ": our document lacks key " << key;
      if (key == "tensors") {
        CompareTensors(value, ours[key]);
      } else if (key == "collections") {
        EXPECT_EQ(value, ours[key]) << fixture_ << ": collections differ";
      } else {
        EXPECT_EQ(value, ours[key]) << fixture_ << ": " << key << " differs";
      }
    }
  }

  const std::map<Divergence, int>& divergences() const { return divergences_; }
  int compared_values() const { return compared_values_; }
  int compared_reductions() const { return compared_reductions_; }

 private:
  void Allow(Divergence d) { ++divergences_[d]; }

  void CompareTensors(const Json& expected, const Json& ours) {
    ASSERT_EQ(expected.size(), ours.size()) << fixture_ << ": number of tensors";
    for (const auto& [name, et] : expected.items()) {
      ASSERT_TRUE(ours.contains(name)) << fixture_ << ": missing tensor " << name;
      const Json& ot = ours[name];
      for (const char* key : {"steps", "steps_including_incomplete", "steps_by_mode", "original_name"}) {
        EXPECT_EQ(et[key], ot[key]) << fixture_ << " " << name << ": " << key;
      }
      ASSERT_EQ(et["per_step"].size(), ot["per_step"].size()) << fixture_ << " " << name;
      for (const auto& [step, es] : et["per_step"].items()) {
        ASSERT_TRUE(ot["per_step"].contains(step)) << fixture_ << " " << name << " step " << step;
        const Json& os = ot["per_step"][step];
        EXPECT_EQ(es["mode"], os["mode"]) << name << " step " << step;
        EXPECT_EQ(es["mode_step"], os["mode_step"]) << name << " step " << step;
        EXPECT_EQ(es["workers"], os["workers"]) << name << " step " << step;
        for (const auto& [worker, ew] : es["by_worker"].items()) {
          ASSERT_TRUE(os["by_worker"].contains(worker)) << name << " step " << step << " " << worker;
          context_ = fixture_ + " " + name + " step " + step + " " + worker;
          CompareWorker(name, std::stoll(step), worker, ew, os["by_worker"][worker]);
        }
      }
    }
  }

  // True if the record of (name, step, worker) carries a real, verified payload CRC.
  bool HasRealPayloadCrc(const std::string& name, int64_t step, const std::string& worker) {
    for (const TensorEntry& e : trial_.Entries(name, step)) {
      if (e.worker != worker || !e.location) continue;
      // Through the trial's Env, so the check works for local folders and S3 alike.
      auto file = env_->NewRandomAccessFile(Env::JoinPath(trial_.root(), *e.event_file));
      if (!file.ok()) return false;
      std::string bytes(e.location->length, '\0');
      auto read = (*file)->Read(e.location->start_idx, std::as_writable_bytes(std::span(bytes)));
      if (!read.ok() || *read != bytes.size()) return false;
      auto record = tfrecord::ParseExactRecord(std::as_bytes(std::span(bytes)), *e.event_file,
                                               e.location->start_idx);
      return record.ok() && record->has_payload_crc;
    }
    return false;
  }

  void CompareWorker(const std::string& name, int64_t step, const std::string& worker, const Json& ew,
                     const Json& ow) {
    const Json& ov = ow["value"];
    ASSERT_FALSE(IsError(ov)) << context_ << ": we failed to read a value smdebug wrote: " << ov.dump();
    ASSERT_TRUE(ov.is_object()) << context_;
    const std::string our_dtype = ov["dtype"];
    const bool is_string = our_dtype.rfind("<U", 0) == 0;
    const bool is_complex = our_dtype.rfind("complex", 0) == 0;
    const int64_t size = ov["size"];

    // --- the value itself ---
    const Json& ev = ew["value"];
    std::optional<Divergence> value_divergence;
    if (IsError(ev) && ev["error"] == "NameError") {
      EXPECT_TRUE(HasRealPayloadCrc(name, step, worker))
          << context_ << ": smdebug failed with NameError but the record has no real payload CRC";
      value_divergence = Divergence::kRealPayloadCrc;
    } else if (IsError(ev) && ev["error"] == "KeyError") {
      static const std::set<std::string> kUnreadable = {"int16", "uint16", "uint32", "uint64", "complex64"};
      EXPECT_TRUE(kUnreadable.count(our_dtype)) << context_ << ": KeyError for dtype " << our_dtype;
      value_divergence = Divergence::kUnreadableDtype;
    } else if (ev.is_null() || IsError(ev)) {
      EXPECT_EQ(size, 0) << context_ << ": smdebug could not read it (" << ev.dump() << ") but it is not empty";
      value_divergence = Divergence::kEmptyTensor;
    } else {
      ++compared_values_;
      EXPECT_EQ(ev["shape"], ov["shape"]) << context_;
      EXPECT_EQ(ev["size"], ov["size"]) << context_;
      for (const char* key : {"sha256_le_c_order", "nan_count", "posinf_count", "neginf_count"}) {
        EXPECT_EQ(ev.contains(key), ov.contains(key)) << context_ << ": " << key;
        if (ev.contains(key)) {
          EXPECT_EQ(ev[key], ov[key]) << context_ << ": " << key;
        }
      }
      EXPECT_EQ(ev.contains("values"), ov.contains("values")) << context_;
      if (ev["dtype"] == "uint8" && our_dtype == "int8") {
        value_divergence = Divergence::kInt8AsUint8;
        ASSERT_EQ(ev["values"].size(), ov["values"].size()) << context_;
        for (size_t i = 0; i < ev["values"].size(); ++i) {
          EXPECT_EQ(ev["values"][i].get<int>(), static_cast<uint8_t>(ov["values"][i].get<int>())) << context_;
        }
      } else {
        EXPECT_EQ(ev["dtype"], ov["dtype"]) << context_;
        if (ev.contains("values")) {
          EXPECT_EQ(ev["values"], ov["values"]) << context_;
        }
      }
    }
    if (value_divergence) Allow(*value_divergence);

    // --- shape ---
    if (IsError(ew["shape"])) {
      EXPECT_TRUE(value_divergence.has_value()) << context_ << ": shape error " << ew["shape"].dump();
    } else {
      EXPECT_EQ(ew["shape"], ow["shape"]) << context_;
    }
    EXPECT_EQ(ow["shape"], ov["shape"]) << context_ << ": shape() and value().shape disagree";

    // --- value via mode step ---
    EXPECT_EQ(ow["value_via_mode_step_matches"], true) << context_;
    if (ew["value_via_mode_step_matches"] != true) {
      if (is_string) {
        Allow(Divergence::kStringModeStepCompare);
      } else {
        EXPECT_TRUE(value_divergence.has_value()) << context_ << ": " << ew["value_via_mode_step_matches"].dump();
      }
    }
    EXPECT_EQ(ew["saved_reductions"], ow["saved_reductions"]) << context_;

    // --- reductions ---
    std::vector<std::complex<double>> listed;
    const bool have_listed = ov.contains("values") && !is_string;
    if (have_listed) {
      for (const Json& x : ov["values"]) {
        if (x.is_object()) {
          listed.emplace_back(*AsDouble(x["re"]), *AsDouble(x["im"]));
        } else {
          listed.emplace_back(*AsDouble(x), 0.0);
        }
      }
    }
    const Json& shape = ov["shape"];
    const bool has_nonfinite = ov.value("nan_count", 0) + ov.value("posinf_count", 0) + ov.value("neginf_count", 0) > 0;
    for (const auto& [key, er] : ew["reductions"].items()) {
      ASSERT_TRUE(ow["reductions"].contains(key)) << context_ << " " << key;
      const Json& orr = ow["reductions"][key];
      const std::string where = context_ + " " + key;
      const bool abs = key.rfind("abs_", 0) == 0;
      const std::string r = abs ? key.substr(4) : key;
      const std::optional<double> our_value = orr["value"].is_null() ? std::nullopt : AsDouble(orr["value"]);
      const double ours = our_value.value_or(std::nan(""));

      if (is_string) {
        EXPECT_TRUE(IsError(orr)) << where << ": strings have no reductions";
        EXPECT_TRUE(IsError(er)) << where;
        Allow(Divergence::kStringReductions);
        continue;
      }
      // 1. Our value against the plain reference whenever the values are listed.
      if (have_listed) {
        const auto ref = ReferenceReduction(listed, is_complex, key);
        if (!ref) {
          EXPECT_TRUE(IsError(orr)) << where << ": expected undefined, got " << orr.dump();
        } else {
          ASSERT_TRUE(our_value.has_value()) << where << ": " << orr.dump();
          EXPECT_TRUE(Close(ours, *ref, 1e-300, 1e-12)) << where << ": ours " << ours << " reference " << *ref;
        }
      } else if (size == 0) {
        const auto ref = ReferenceReduction({}, is_complex, key);
        if (!ref) {
          EXPECT_TRUE(IsError(orr)) << where;
        } else {
          ASSERT_TRUE(our_value.has_value()) << where;
          EXPECT_TRUE(Close(ours, *ref, 0, 0)) << where;
        }
      }
      // 2. Against smdebug, unless a listed divergence applies.
      if (value_divergence) continue;  // counted once above
      if (is_complex && !abs && r != "l1" && r != "l2") {
        EXPECT_TRUE(IsError(orr)) << where;
        Allow(Divergence::kComplexReductions);
        continue;
      }
      if (r == "l1" || r == "l2") {
        if (shape.size() != 1) {
          // Element-wise norms: check against smdebug's own abs_sum / variance / mean (when the
          // values are listed, step 1 above already checked them against the plain reference).
          Allow(shape.size() == 2 ? Divergence::kMatrixNorm : Divergence::kNormRank);
          if (have_listed) continue;
          ASSERT_TRUE(our_value.has_value()) << where << ": " << orr.dump();
          const auto abs_sum = AsDouble(ew["reductions"]["abs_sum"]["value"]);
          const auto mean = AsDouble(ew["reductions"]["mean"]["value"]);
          const auto var = AsDouble(ew["reductions"]["variance"]["value"]);
          if (has_nonfinite) {
            EXPECT_TRUE(!std::isfinite(ours)) << where << ": non-finite input, finite norm";
          } else if (r == "l1") {
            EXPECT_TRUE(Close(ours, *abs_sum, 0, 1e-5)) << where << ": " << ours << " vs abs_sum " << *abs_sum;
          } else {
            const double derived = std::sqrt(static_cast<double>(size) * (*var + *mean * *mean));
            EXPECT_TRUE(Close(ours, derived, 1e-30, 1e-4)) << where << ": " << ours << " vs " << derived;
          }
          continue;
        }
      }
      ASSERT_FALSE(IsError(er)) << where << ": smdebug error " << er.dump() << " not covered by a divergence";
      const std::optional<double> expected = AsDouble(er["value"]);
      ASSERT_TRUE(expected.has_value()) << where << ": " << er.dump();
      ASSERT_TRUE(our_value.has_value()) << where << ": " << orr.dump();
      ++compared_reductions_;

      if (our_dtype == "float16") {
        // smdebug computes in float16: overflow to inf (also in intermediate sums, checked against
        // the plain reference in step 1) and ~1e-3 relative error.
        if (!Close(ours, *expected, 0, 0)) Allow(Divergence::kHalfPrecision);
        const bool overflowed = std::isinf(*expected) && (have_listed || std::fabs(ours) > 65504.0);
        EXPECT_TRUE(overflowed || Close(ours, *expected, 1e-7, 2e-3)) << where << ": " << ours << " vs " << *expected;
        continue;
      }
      const bool integer = our_dtype.rfind("int", 0) == 0 || our_dtype.rfind("uint", 0) == 0;
      if (integer && !Close(ours, *expected, 0, 1e-12) && (abs || std::fabs(ours) >= 9.2233720368547758e18)) {
        // numpy's abs wraps for the most negative integer and int64/uint64 products wrap;
        // ours must equal the plain double reference (step 1).
        EXPECT_TRUE(have_listed) << where << ": integer wrap divergence on a tensor we cannot check";
        Allow(Divergence::kIntegerWrap);
        continue;
      }
      if ((our_dtype == "float32" || our_dtype == "complex64") && std::isinf(*expected) && std::isfinite(ours)) {
        // Ours is finite in double where float32 overflowed: the result itself, or for l2, std
        // and variance the sum of squares on the way.
        constexpr double kFloatMax = 3.4028234663852886e38;
        const bool squares = r == "l2" || r == "std" || r == "variance";
        EXPECT_TRUE(std::fabs(ours) > kFloatMax || (squares && ours * ours > kFloatMax))
            << where << ": smdebug overflowed to inf but ours " << ours << " fits in float32";
        Allow(Divergence::kFloat32Overflow);
        continue;
      }
      double abs_tol = 0, rel_tol = 1e-12;
      if (our_dtype == "float32" || our_dtype == "complex64") {
        // smdebug accumulates in float32; scale the tolerance to the data (spec §7.4.3).
        const double abs_sum = AsDouble(ew["reductions"]["abs_sum"]["value"]).value_or(0);
        const double abs_mean = AsDouble(ew["reductions"]["abs_mean"]["value"]).value_or(0);
        rel_tol = 1e-5;
        if (r == "sum" || r == "l1") abs_tol = 1e-5 * abs_sum;
        if (r == "mean") abs_tol = 1e-5 * abs_mean;
        if (r == "std") abs_tol = 1e-4 * abs_mean, rel_tol = 1e-4;
        if (r == "variance") abs_tol = 1e-4 * abs_mean * abs_mean, rel_tol = 1e-4;
        if (r == "prod") abs_tol = 1.2e-38, rel_tol = 1e-4;  // float32 underflows to 0
      }
      EXPECT_TRUE(Close(ours, *expected, abs_tol, rel_tol))
          << where << ": ours " << ours << " smdebug " << *expected;
    }
  }

  std::string fixture_;
  const Trial& trial_;
  Env* env_;
  std::string context_;
  std::map<Divergence, int> divergences_;
  int compared_values_ = 0;
  int compared_reductions_ = 0;
};

}  // namespace

FixtureComparison CompareFixtureWithExpected(const std::string& fixture, const Trial& trial, Env* env) {
  FixtureComparison result;
  const Json expected = LoadJson(FixturePath(fixture).string() + ".expected.json");
  StatusOr<std::string> text = BuildTrialDocument(trial);
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  if (!text.ok()) return result;
  FixtureComparer comparer(fixture, trial, env);
  comparer.Compare(expected, Json::parse(*text));
  result.compared_values = comparer.compared_values();
  result.compared_reductions = comparer.compared_reductions();
  for (const auto& [d, count] : comparer.divergences()) result.divergences[DivergenceName(d)] = count;
  return result;
}

}  // namespace litmus::testing
