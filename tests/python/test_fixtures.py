"""The Python API (`import litmus`) on every smdebug reference trial, compared with what smdebug's
own reader returned (tests/fixtures/smdebug/*.expected.json) field by field, as the C++ interop
test does (tests/interop/fixture_comparer.cc): catalog keys exactly; values by dtype, shape and
sha256 of their little-endian C-order bytes; reductions with the documented differences of
docs/compatibility.md, each recognised by a condition on the data and then checked another way.
Also: zero-copy read-only arrays, batch reads, exceptions, to_dict and the GIL.
Run: PYTHONPATH=<build>/python python3 -m unittest tests/python/test_fixtures.py
"""
import cmath
import hashlib
import json
import math
import os
import shutil
import tempfile
import threading
import unittest

import numpy as np

import litmus
from litmus import ModeKeys, StepState
from litmus import exceptions as exc

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "smdebug")
FIXTURE_NAMES = ["pt_exploding", "synthetic_dtypes", "pt_ddp_two_workers", "pt_run_partial", "pt_run_complete"]
MODES = [ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT, ModeKeys.GLOBAL]
REDUCTIONS = ["min", "max", "mean", "std", "variance", "sum", "prod", "l1", "l2"]
MAX_LISTED = 16  # expected.json lists the values of tensors with at most 16 elements
UNREADABLE_BY_SMDEBUG = {"int16", "uint16", "uint32", "uint64", "complex64"}


def open_fixture(name):
    os.environ["SMDEBUG_TRAINING_END_DELAY_REFRESH"] = "0"
    return litmus.create_trial(os.path.join(FIXTURES, name))


def load_expected(name):
    with open(os.path.join(FIXTURES, name + ".expected.json")) as f:
        return json.load(f)


def error_of(e):
    return {"error": type(e).__name__}


def is_error(j):
    return isinstance(j, dict) and "error" in j


def as_float(j):
    if isinstance(j, bool):
        return 1.0 if j else 0.0
    if isinstance(j, (int, float)):
        return float(j)
    return {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}.get(j)


def float_json(v):
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def element_json(x, dtype):
    if dtype.kind == "c":
        return {"re": float_json(float(x.real)), "im": float_json(float(x.imag))}
    if dtype.kind == "f":
        return float_json(float(x))
    if dtype.kind == "b":
        return bool(x)
    if dtype.kind in "iu":
        return int(x)
    return str(x)


def value_json(v):
    """A value as expected.json describes it."""
    j = {"dtype": v.dtype.str if v.dtype.kind == "U" else v.dtype.name, "shape": list(v.shape), "size": int(v.size)}
    if v.size <= MAX_LISTED:
        j["values"] = [element_json(x, v.dtype) for x in v.reshape(-1)]
    if v.dtype.kind == "U":
        return j
    le = np.ascontiguousarray(v).astype(v.dtype.newbyteorder("<"), copy=False)
    j["sha256_le_c_order"] = hashlib.sha256(le.tobytes()).hexdigest()
    if v.dtype.kind in "fc":
        parts = [v.real, v.imag] if v.dtype.kind == "c" else [v]
        nan = np.isnan(v).sum()
        j["nan_count"] = int(nan)
        j["posinf_count"] = int(sum(np.isposinf(p).sum() for p in parts))
        j["neginf_count"] = int(sum(np.isneginf(p).sum() for p in parts))
    return j


def reference_reduction(xs, is_complex, key):
    """Reductions with litmus's semantics computed plainly in Python (fixture_comparer.cc)."""
    abs_ = key.startswith("abs_")
    r = key[4:] if abs_ else key
    if is_complex and not abs_ and r not in ("l1", "l2"):
        return None
    v = [abs(z) if (is_complex or abs_) else z.real for z in xs]
    n = len(v)
    if r == "sum":
        return sum(v)
    if r == "prod":
        return math.prod(v)
    if r == "l1":
        return sum(abs(x) for x in v)
    if r == "l2":
        return math.sqrt(sum(x * x for x in v))
    if not v:
        return None if r in ("min", "max") else math.nan
    mean = sum(v) / n
    if r == "mean":
        return mean
    var = sum((x - mean) ** 2 for x in v) / n
    if r == "variance":
        return var
    if r == "std":
        return math.sqrt(var)
    if any(math.isnan(x) for x in v):
        return math.nan
    return min(v) if r == "min" else max(v)


def close(ours, expected, abs_tol, rel_tol):
    if math.isnan(ours) or math.isnan(expected):
        return math.isnan(ours) and math.isnan(expected)
    if math.isinf(ours) or math.isinf(expected):
        return ours == expected
    return abs(ours - expected) <= abs_tol + rel_tol * abs(expected)


class FixtureDocument:
    """What the Python API says about a trial, in expected.json's shape."""

    def __init__(self, trial):
        self.trial = trial

    def top_level(self):
        t = self.trial
        doc = {
            "trial": t.name,
            "training_job_end_marker_present": t.training_ended(),
            "steps": t.steps(),
            "steps_including_incomplete": t.steps(show_incomplete_steps=True),
            "loaded_all_steps": t.loaded_all_steps,
            "workers": t.workers(),
            "num_workers_from_collections": t.num_workers,
            "last_complete_step": t.last_complete_step,
        }
        modes = {}
        for m in MODES:
            steps = t.steps(mode=m)
            modes[m.name] = {"mode_steps": steps, "global_steps": [t.global_step(m, s) for s in steps],
                             "mode_steps_including_incomplete": t.steps(mode=m, show_incomplete_steps=True)}
        doc["modes"] = modes
        doc["global_step_to_mode"] = {str(g): [t.mode(g).name, t.mode_step(g)]
                                      for g in t.steps(show_incomplete_steps=True)}
        doc["tensor_names"] = t.tensor_names()
        by_mode = {}
        for m in MODES:
            try:
                by_mode[m.name] = t.tensor_names(mode=m)
            except KeyError:
                by_mode[m.name] = {"error": "KeyError"}
        doc["tensor_names_by_mode"] = by_mode
        doc["tensor_names_by_step"] = {str(g): t.tensor_names(step=g) for g in t.steps(show_incomplete_steps=True)}
        doc["collections"] = {
            name: {"tensor_names": c.tensor_names, "include_regex": c.include_regex,
                   "trial_tensor_names": t.tensor_names(collection=name), "reduction_config": c.reduction_config}
            for name, c in t.collections().items()}
        return doc

    def tensor(self, name):
        t = self.trial
        tensor = t.tensor(name)
        all_steps = tensor.steps(show_incomplete_steps=True)
        by_mode = {}
        for g in all_steps:
            by_mode.setdefault(t.mode(g).name, []).append([t.mode_step(g), g])
        per_step = {}
        for g in all_steps:
            mode, mode_step = t.mode(g), t.mode_step(g)
            workers = tensor.workers(g)
            per_step[str(g)] = {"mode": mode.name, "mode_step": mode_step, "workers": workers,
                                "by_worker": {w: self.worker(tensor, g, mode, mode_step, w) for w in workers}}
        return {"steps": tensor.steps(), "steps_including_incomplete": all_steps, "steps_by_mode": by_mode,
                "original_name": None, "per_step": per_step}

    @staticmethod
    def worker(tensor, g, mode, mode_step, w):
        out = {}
        try:
            value = tensor.value(g, worker=w)
            out["value"] = value_json(value)
        except Exception as e:  # noqa: BLE001 (recorded like expected.json records smdebug's)
            value, out["value"] = None, error_of(e)
        try:
            out["shape"] = list(tensor.shape(g, worker=w))
        except Exception as e:  # noqa: BLE001
            out["shape"] = error_of(e)
        try:
            via = tensor.value(mode_step, mode=mode, worker=w)
            out["value_via_mode_step_matches"] = value is not None and value.dtype == via.dtype and \
                value.shape == via.shape and bool(np.array_equal(value, via, equal_nan=value.dtype.kind in "fc"))
        except Exception as e:  # noqa: BLE001
            out["value_via_mode_step_matches"] = error_of(e)
        out["saved_reductions"] = sorted([list(k) for k in tensor.reduction_values(g, worker=w)])
        reductions = {}
        for r in REDUCTIONS:
            for abs_ in (False, True):
                key = ("abs_" if abs_ else "") + r
                try:
                    reductions[key] = {"value": float_json(tensor.reduction_value(g, r, abs=abs_, worker=w))}
                except Exception as e:  # noqa: BLE001
                    reductions[key] = {"value": None, "error": type(e).__name__}
        out["reductions"] = reductions
        return out


class FixtureComparer:
    """fixture_comparer.cc in Python: the only differences allowed are docs/compatibility.md's."""

    def __init__(self, test, fixture):
        self.t, self.fixture = test, fixture
        self.divergences = {}
        self.compared_values = 0
        self.compared_reductions = 0

    def allow(self, d):
        self.divergences[d] = self.divergences.get(d, 0) + 1

    def compare(self, expected, doc):
        top = doc.top_level()
        for key, value in expected.items():
            if key in ("schema", "smdebug_version", "rule_outcomes", "tensors"):
                continue
            self.t.assertIn(key, top, "%s: our document lacks %s" % (self.fixture, key))
            self.t.assertEqual(value, top[key], "%s: %s differs" % (self.fixture, key))
        names = doc.trial.tensor_names()
        self.t.assertEqual(sorted(expected["tensors"]), names, self.fixture)
        for name, et in expected["tensors"].items():
            ot = doc.tensor(name)
            for key in ("steps", "steps_including_incomplete", "steps_by_mode", "original_name"):
                self.t.assertEqual(et[key], ot[key], "%s %s: %s" % (self.fixture, name, key))
            self.t.assertEqual(sorted(et["per_step"]), sorted(ot["per_step"]), "%s %s" % (self.fixture, name))
            for step, es in et["per_step"].items():
                os_ = ot["per_step"][step]
                for key in ("mode", "mode_step", "workers"):
                    self.t.assertEqual(es[key], os_[key], "%s %s step %s: %s" % (self.fixture, name, step, key))
                for worker, ew in es["by_worker"].items():
                    with self.t.subTest(fixture=self.fixture, tensor=name, step=step, worker=worker):
                        self.worker("%s %s step %s %s" % (self.fixture, name, step, worker), ew,
                                    os_["by_worker"][worker])

    def worker(self, where, ew, ow):
        t = self.t
        ov = ow["value"]
        t.assertFalse(is_error(ov), "%s: we failed to read a value smdebug wrote: %s" % (where, ov))
        dtype, size = ov["dtype"], ov["size"]
        is_string, is_complex = dtype.startswith("<U"), dtype.startswith("complex")
        ev = ew["value"]
        divergence = None
        if is_error(ev) and ev["error"] == "NameError":
            divergence = "real payload CRC"  # verified record by record by tests/interop
        elif is_error(ev) and ev["error"] == "KeyError":
            t.assertIn(dtype, UNREADABLE_BY_SMDEBUG, where)
            divergence = "dtype smdebug cannot read"
        elif ev is None or is_error(ev):
            t.assertEqual(size, 0, "%s: smdebug could not read it (%s) but it is not empty" % (where, ev))
            divergence = "empty tensor"
        else:
            self.compared_values += 1
            t.assertEqual(ev["shape"], ov["shape"], where)
            t.assertEqual(ev["size"], ov["size"], where)
            for key in ("sha256_le_c_order", "nan_count", "posinf_count", "neginf_count"):
                t.assertEqual(key in ev, key in ov, "%s: %s" % (where, key))
                if key in ev:
                    t.assertEqual(ev[key], ov[key], "%s: %s" % (where, key))
            t.assertEqual("values" in ev, "values" in ov, where)
            if ev["dtype"] == "uint8" and dtype == "int8":
                divergence = "int8 read back as uint8"
                t.assertEqual(ev["values"], [x % 256 for x in ov["values"]], where)
            else:
                t.assertEqual(ev["dtype"], dtype, where)
                if "values" in ev:
                    t.assertEqual(ev["values"], ov["values"], where)
        if divergence:
            self.allow(divergence)

        if is_error(ew["shape"]):
            t.assertIsNotNone(divergence, "%s: shape error %s" % (where, ew["shape"]))
        else:
            t.assertEqual(ew["shape"], ow["shape"], where)
        t.assertEqual(ow["shape"], ov["shape"], "%s: shape() and value().shape disagree" % where)

        t.assertIs(ow["value_via_mode_step_matches"], True, where)
        if ew["value_via_mode_step_matches"] is not True:
            if is_string:
                self.allow("smdebug cannot compare string arrays")
            else:
                t.assertIsNotNone(divergence, where)
        t.assertEqual(ew["saved_reductions"], ow["saved_reductions"], where)

        listed = None
        if "values" in ov and not is_string:
            listed = [complex(as_float(x["re"]), as_float(x["im"])) if isinstance(x, dict) else complex(as_float(x), 0)
                      for x in ov["values"]]
        shape = ov["shape"]
        nonfinite = ov.get("nan_count", 0) + ov.get("posinf_count", 0) + ov.get("neginf_count", 0) > 0
        for key, er in ew["reductions"].items():
            orr = ow["reductions"][key]
            here = "%s %s" % (where, key)
            abs_ = key.startswith("abs_")
            r = key[4:] if abs_ else key
            ours = as_float(orr["value"]) if orr["value"] is not None else None
            if is_string:
                t.assertTrue(is_error(orr), "%s: strings have no reductions" % here)
                t.assertTrue(is_error(er), here)
                self.allow("reductions of strings")
                continue
            # 1. Ours against the plain reference whenever the values are listed.
            if listed is not None or size == 0:
                ref = reference_reduction(listed or [], is_complex, key)
                if ref is None:
                    t.assertTrue(is_error(orr), "%s: expected undefined, got %s" % (here, orr))
                else:
                    t.assertIsNotNone(ours, "%s: %s" % (here, orr))
                    tol = (1e-300, 1e-12) if listed is not None else (0, 0)
                    t.assertTrue(close(ours, ref, *tol), "%s: ours %r reference %r" % (here, ours, ref))
            # 2. Against smdebug, unless a listed divergence applies.
            if divergence:
                continue
            if is_complex and not abs_ and r not in ("l1", "l2"):
                t.assertTrue(is_error(orr), here)
                self.allow("non-abs reductions of complex tensors")
                continue
            if r in ("l1", "l2") and len(shape) != 1:
                self.allow("matrix norm for 2-D l1/l2 in smdebug" if len(shape) == 2
                           else "smdebug l1/l2 raise for 0-d and >=3-D")
                if listed is not None:
                    continue
                t.assertIsNotNone(ours, here)
                abs_sum = as_float(ew["reductions"]["abs_sum"]["value"])
                mean = as_float(ew["reductions"]["mean"]["value"])
                var = as_float(ew["reductions"]["variance"]["value"])
                if nonfinite:
                    t.assertFalse(math.isfinite(ours), "%s: non-finite input, finite norm" % here)
                elif r == "l1":
                    t.assertTrue(close(ours, abs_sum, 0, 1e-5), "%s: %r vs abs_sum %r" % (here, ours, abs_sum))
                else:
                    derived = math.sqrt(size * (var + mean * mean))
                    t.assertTrue(close(ours, derived, 1e-30, 1e-4), "%s: %r vs %r" % (here, ours, derived))
                continue
            t.assertFalse(is_error(er), "%s: smdebug error %s not covered by a divergence" % (here, er))
            expected = as_float(er["value"])
            t.assertIsNotNone(expected, here)
            t.assertIsNotNone(ours, "%s: %s" % (here, orr))
            self.compared_reductions += 1
            if dtype == "float16":
                if not close(ours, expected, 0, 0):
                    self.allow("float16 arithmetic in smdebug")
                overflowed = math.isinf(expected) and (listed is not None or abs(ours) > 65504.0)
                t.assertTrue(overflowed or close(ours, expected, 1e-7, 2e-3), "%s: %r vs %r" % (here, ours, expected))
                continue
            integer = dtype.startswith("int") or dtype.startswith("uint")
            if integer and not close(ours, expected, 0, 1e-12) and (abs_ or abs(ours) >= 9.2233720368547758e18):
                t.assertIsNotNone(listed, "%s: integer wrap divergence on a tensor we cannot check" % here)
                self.allow("integer abs or product wraps in smdebug")
                continue
            if dtype in ("float32", "complex64") and math.isinf(expected) and math.isfinite(ours):
                float_max = 3.4028234663852886e38
                squares = r in ("l2", "std", "variance")
                t.assertTrue(abs(ours) > float_max or (squares and ours * ours > float_max), here)
                self.allow("float32 result overflows to inf in smdebug")
                continue
            abs_tol, rel_tol = 0.0, 1e-12
            if dtype in ("float32", "complex64"):
                abs_sum = as_float(ew["reductions"]["abs_sum"]["value"]) or 0.0
                abs_mean = as_float(ew["reductions"]["abs_mean"]["value"]) or 0.0
                rel_tol = 1e-5
                if r in ("sum", "l1"):
                    abs_tol = 1e-5 * abs_sum
                if r == "mean":
                    abs_tol = 1e-5 * abs_mean
                if r == "std":
                    abs_tol, rel_tol = 1e-4 * abs_mean, 1e-4
                if r == "variance":
                    abs_tol, rel_tol = 1e-4 * abs_mean * abs_mean, 1e-4
                if r == "prod":
                    abs_tol, rel_tol = 1.2e-38, 1e-4
            t.assertTrue(close(ours, expected, abs_tol, rel_tol), "%s: ours %r smdebug %r" % (here, ours, expected))


class FixtureTest(unittest.TestCase):
    def test_every_fixture_matches_smdebug_expected(self):
        for fixture in FIXTURE_NAMES:
            with self.subTest(fixture=fixture):
                comparer = FixtureComparer(self, fixture)
                comparer.compare(load_expected(fixture), FixtureDocument(open_fixture(fixture)))
                self.assertGreater(comparer.compared_values, 0)
                print("  %s: %d values and %d reductions compared with smdebug; divergences %s" % (
                    fixture, comparer.compared_values, comparer.compared_reductions, comparer.divergences))


class ApiTest(unittest.TestCase):
    def setUp(self):
        self.trial = open_fixture("pt_run_complete")
        self.name = self.trial.tensor_names(collection="gradients")[0]

    def test_value_is_a_read_only_view_that_outlives_the_trial(self):
        value = self.trial.tensor(self.name).value(0)
        self.assertFalse(value.flags.writeable)
        self.assertFalse(value.flags.owndata)  # a view of the decoded buffer, not a copy
        with self.assertRaises(ValueError):
            value[...] = 0
        copy = value.copy()
        del self.trial
        np.testing.assert_array_equal(value, copy)  # the array keeps the decoded tensor alive

    def test_batch_read_stacks_the_steps(self):
        tensor = self.trial.tensor(self.name)
        steps = tensor.steps()
        stacked = tensor.values(steps)
        self.assertEqual(stacked.shape, (len(steps),) + tensor.value(steps[0]).shape)
        for i, s in enumerate(steps):
            np.testing.assert_array_equal(stacked[i], tensor.value(s))
        by_step = tensor.values()  # smdebug's values(): {step: value}
        self.assertEqual(sorted(by_step), steps)
        by_mode = tensor.values(ModeKeys.TRAIN)
        self.assertEqual(sorted(by_mode), tensor.steps(mode=ModeKeys.TRAIN))

    def test_batch_read_raises_for_a_missing_step(self):
        tensor = self.trial.tensor(self.name)
        with self.assertRaises(exc.TensorUnavailableForStep):  # gradients are not saved at EVAL steps
            tensor.values([0, 6])

    def test_trial_values_equal_value_on_every_fixture(self):
        # Trial.values(names): {name: stacked array}, read file-major; every value equal to value().
        for fixture in FIXTURE_NAMES:
            with self.subTest(fixture=fixture):
                t = open_fixture(fixture)
                names = [n for n in t.tensor_names() if t.tensor(n).value(t.tensor(n).steps()[0]).dtype.kind != "U"]
                got = t.values(names)
                self.assertEqual(sorted(got), sorted(names))
                compared = 0
                for name in names:
                    steps = t.tensor(name).steps()
                    self.assertEqual(got[name].shape[0], len(steps), name)
                    for i, s in enumerate(steps):
                        expected = t.tensor(name).value(s)
                        self.assertEqual(got[name][i].dtype, expected.dtype, name)
                        np.testing.assert_array_equal(got[name][i], expected, err_msg="%s at %d" % (name, s))
                        compared += 1
                self.assertGreater(compared, 0)
                # Shared steps and a mode: what Tensor.values(steps, mode=) gives.
                train = t.steps(mode=ModeKeys.TRAIN)[:3]
                by_mode = t.values(names[:2], train, mode=ModeKeys.TRAIN)
                for name in names[:2]:
                    np.testing.assert_array_equal(by_mode[name], t.tensor(name).values(train, mode=ModeKeys.TRAIN))

    def test_trial_values_raise_what_value_raises(self):
        t = self.trial
        with self.assertRaises(exc.TensorUnavailableForStep):  # gradients are not saved at EVAL steps
            t.values([self.name], [0, 6])
        with self.assertRaises(exc.TensorUnavailable):
            t.values([self.name, "no/such/tensor"])
        self.assertEqual(list(t.values(self.name)), [self.name])  # one name
        strings = open_fixture("synthetic_dtypes")
        with self.assertRaises(TypeError):  # as Tensor.values(steps): numbers only
            strings.values(["exotic/string"])

    def test_exceptions_are_smdebugs(self):
        t = self.trial
        tensor = t.tensor(self.name)
        with self.assertRaises(exc.TensorUnavailable):
            t.tensor("no/such/tensor")
        with self.assertRaises(exc.TensorUnavailableForStep) as e:
            tensor.value(6)
        self.assertIn("Value for tensor %s is not available for step 6 with mode GLOBAL" % self.name, str(e.exception))
        with self.assertRaises(exc.NoMoreData):
            tensor.value(100)
        with self.assertRaises(exc.InvalidWorker):
            tensor.value(0, worker="worker_9")
        with self.assertRaises(KeyError):
            t.tensor_names(mode=ModeKeys.PREDICT)
        with self.assertRaises(exc.NoMoreData):
            t.wait_for_steps([100])
        trial = open_fixture("synthetic_dtypes")  # steps 0, 1, 2, 5
        with self.assertRaises(exc.StepUnavailable):
            trial.wait_for_steps([3])
        self.assertEqual(trial.has_passed_step(3), StepState.UNAVAILABLE)
        self.assertEqual(trial.has_passed_step(5), StepState.AVAILABLE)
        self.assertEqual(trial.has_passed_step(6), StepState.UNAVAILABLE)

    def test_modes_and_filters(self):
        t = self.trial
        self.assertEqual(t.mode(6), ModeKeys.EVAL)
        self.assertEqual(t.mode_step(6), 0)
        self.assertEqual(t.global_step(ModeKeys.EVAL, 0), 6)
        self.assertEqual(t.steps(mode=ModeKeys.EVAL), [0, 1, 2, 3])
        self.assertEqual(t.tensor_names(regex="^gradient"), t.tensor_names(collection="gradients"))
        self.assertEqual(t.tensor_names(collection="no-such-collection"), [])
        self.assertTrue(set(t.tensor_names(step=6)) < set(t.tensor_names()))
        np.testing.assert_array_equal(t.tensor(self.name).value(0, mode=ModeKeys.TRAIN), t.tensor(self.name).value(0))

    def test_to_dict_holds_the_reductions_of_every_step(self):
        d = self.trial.to_dict(names=[self.name], reductions=["mean", "max"], abs=True)
        tensor = self.trial.tensor(self.name)
        entry = d[self.name]
        self.assertEqual(entry["steps"], tensor.steps())
        for s, m in zip(entry["steps"], entry["abs_mean"]):
            self.assertAlmostEqual(m, float(np.abs(tensor.value(s).astype(np.float64)).mean()), places=6)
        with self.assertRaises(ValueError):
            self.trial.to_dict(reductions=["median"])

    def test_range_steps(self):
        trial = litmus.create_trial(os.path.join(FIXTURES, "pt_run_complete"), range_steps=(2, 5))
        self.assertEqual(trial.steps(), [2, 3, 4])

    def test_reads_release_the_gil(self):
        # Another thread keeps running Python while this one reads; both finish, values agree.
        tensor = self.trial.tensor(self.name)
        steps = tensor.steps()
        results, errors = {}, []

        def read(i):
            try:
                results[i] = [tensor.values(steps).sum() for _ in range(20)]
            except Exception as e:  # noqa: BLE001
                errors.append(e)

        threads = [threading.Thread(target=read, args=(i,)) for i in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        self.assertEqual(errors, [])
        self.assertEqual(len({x for r in results.values() for x in r}), 1)

    def test_a_live_trial_is_refreshed(self):
        # pt_run_complete without its last steps and end marker, as if training still ran.
        with tempfile.TemporaryDirectory() as tmp:
            live = os.path.join(tmp, "live")
            shutil.copytree(os.path.join(FIXTURES, "pt_run_complete"), live)
            index = os.path.join(live, "index", "000000000")
            held = os.path.join(tmp, "held")
            os.mkdir(held)
            for step in range(10, 16):
                name = "%012d_worker_0.json" % step
                shutil.move(os.path.join(index, name), os.path.join(held, name))
            os.remove(os.path.join(live, "training_job_end.ts"))
            trial = litmus.create_trial(live, refresh_interval_s=0)
            self.assertEqual(trial.steps(), list(range(10)))
            self.assertFalse(trial.loaded_all_steps)
            self.assertEqual(trial.has_passed_step(12), StepState.NOT_YET_AVAILABLE)
            with self.assertRaises(exc.StepNotYetAvailable):
                trial.tensor(self.name).value(12)
            for name in sorted(os.listdir(held)):
                shutil.move(os.path.join(held, name), os.path.join(index, name))
            self.assertEqual(trial.steps(), list(range(16)))  # the query itself refreshed
            trial.wait_for_steps([12], poll_interval_s=0.01)
            self.assertEqual(trial.tensor(self.name).value(12).shape, trial.tensor(self.name).value(0).shape)
            open(os.path.join(live, "training_job_end.ts"), "w").close()
            trial.refresh()
            self.assertTrue(trial.loaded_all_steps)
            with self.assertRaises(exc.NoMoreData):
                trial.wait_for_steps([16])

    def test_no_such_trial(self):
        with self.assertRaises(FileNotFoundError):
            litmus.create_trial(os.path.join(FIXTURES, "no_such_trial"))


if __name__ == "__main__":
    unittest.main()
