"""`litmus run --python-rule FILE.py --rule CLASS` (python_rule_host.so, embedded CPython): the
SageMaker docs' CustomGradientRule in Python fires on exactly the steps where the C++ example
plugin (examples/custom_rule) fires, on every fixture at several thresholds, and where smdebug
fired; numpy works on value(); exceptions map to the runner's outcomes; parameters arrive as
keyword arguments; the env form (LITMUS_RULE_PARAMETERS with source_s3_uri and rule_to_invoke).
Needs LITMUS_BINARY and LITMUS_CUSTOM_RULE_PLUGIN (set by tests/python/CMakeLists.txt).
"""
import json
import os
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "fixtures", "smdebug")
RULES = os.path.join(HERE, "rules")
FIXTURE_NAMES = ["pt_exploding", "synthetic_dtypes", "pt_ddp_two_workers", "pt_run_partial", "pt_run_complete"]
LITMUS = os.environ.get("LITMUS_BINARY", "litmus")
CPP_PLUGIN = os.environ.get("LITMUS_CUSTOM_RULE_PLUGIN", "")


class Run:
    """One `litmus run` in a fresh output folder."""

    def __init__(self, args, env=None):
        self.dir = tempfile.TemporaryDirectory()
        out = self.dir.name
        full_env = dict(os.environ, SMDEBUG_TRAINING_END_DELAY_REFRESH="0")
        full_env.update(env or {})
        cmd = [LITMUS, "run", "--output-dir", out, "--message-file", os.path.join(out, "message"),
               "--failure-file", os.path.join(out, "failure"), "--poll-interval-ms", "20"] + args
        p = subprocess.run(cmd, capture_output=True, text=True, env=full_env, timeout=120)
        self.code, self.out, self.err = p.returncode, p.stdout, p.stderr
        self.events = []
        path = os.path.join(out, "events.jsonl")
        if os.path.exists(path):
            with open(path) as f:
                self.events = [json.loads(line) for line in f]
        self.status = {}
        if os.path.exists(os.path.join(out, "status.json")):
            with open(os.path.join(out, "status.json")) as f:
                self.status = json.load(f)
        self.dir.cleanup()

    def fired(self):
        return [e["step"] for e in self.events if e["event"] == "RuleEvaluationConditionMet"]

    def __repr__(self):
        return "exit %d\nstdout: %s\nstderr: %s" % (self.code, self.out, self.err)


def python_rule(trial, file, cls, *extra, env=None):
    return Run(["--trial", os.path.join(FIXTURES, trial), "--python-rule", os.path.join(RULES, file),
                "--rule", cls] + list(extra), env=env)


class CustomGradientRuleTest(unittest.TestCase):
    @unittest.skipUnless(CPP_PLUGIN, "LITMUS_CUSTOM_RULE_PLUGIN not set")
    def test_python_rule_fires_where_the_cpp_plugin_and_smdebug_fire(self):
        for fixture in FIXTURE_NAMES:
            with open(os.path.join(FIXTURES, fixture + ".expected.json")) as f:
                outcomes = json.load(f)["rule_outcomes"]["rules"]
            for threshold in ["0.001", "0.1", "10.0", "1e9"]:
                with self.subTest(fixture=fixture, threshold=threshold):
                    extra = ["--param", "threshold=" + threshold, "--keep-going"]
                    if fixture == "pt_run_partial":
                        extra += ["--end-step", "9"]  # in progress: smdebug was asked up to step 8
                    py = python_rule(fixture, "custom_gradient_rule.py", "CustomGradientRule", *extra)
                    cpp = Run(["--trial", os.path.join(FIXTURES, fixture), "--plugin", CPP_PLUGIN,
                               "--rule", "CustomGradientRule"] + extra)
                    self.assertEqual(py.code, cpp.code, py)
                    self.assertEqual(py.fired(), cpp.fired(), py)
                    self.assertEqual(py.code, 1 if py.fired() else 0, py)
                    self.assertEqual(py.status["RuleEvaluationStatus"], "IssuesFound" if py.fired() else "NoIssuesFound")
                    want = outcomes.get("CustomGradientRule(threshold=%s)" % threshold)
                    if want:
                        fired = {int(s) for s, v in want.items() if v == "triggered"}
                        unknown = {int(s) for s, v in want.items() if v == "NameError"}
                        self.assertEqual(fired, set(py.fired()) - unknown, py)

    def test_first_firing_ends_the_rule_and_names_the_python_class(self):
        run = python_rule("pt_exploding", "custom_gradient_rule.py", "CustomGradientRule", "--param", "threshold=10")
        self.assertEqual(run.code, 1, run)
        self.assertEqual(run.fired(), [4])
        self.assertEqual(run.status["rule"], "CustomGradientRule")
        self.assertIn("Evaluation of the rule CustomGradientRule at step 4 resulted in the condition being met",
                      run.status["StatusDetails"])

    def test_env_form_of_the_contract(self):
        params = {"source_s3_uri": os.path.join(RULES, "custom_gradient_rule.py"),
                  "rule_to_invoke": "CustomGradientRule", "threshold": "10.0"}
        run = Run(["--trial", os.path.join(FIXTURES, "pt_exploding")],
                  env={"LITMUS_RULE_PARAMETERS": json.dumps(params)})
        self.assertEqual(run.code, 1, run)
        self.assertEqual(run.fired(), [4])


class PythonRulesTest(unittest.TestCase):
    def test_numpy_on_values_and_output_goes_to_the_log(self):
        run = python_rule("pt_exploding", "numpy_rule.py", "MaxAbsGradientRule", "--param", "threshold=100",
                          "--keep-going")
        self.assertEqual(run.code, 1, run)
        self.assertEqual(run.fired(), [4, 5, 6, 7], run)  # NaN compares false from step 8 on
        self.assertIn("step 4: max |gradient|", run.err)
        self.assertIn("checked step 4", run.err)
        self.assertNotIn("max |gradient|", run.out)  # stdout is the verdict table's

    def test_exceptions_map_to_the_runners_outcomes(self):
        skip = python_rule("pt_run_complete", "raising_rules.py", "SkipsOddSteps", "--keep-going")
        self.assertEqual(skip.code, 1, skip)
        self.assertEqual(skip.fired(), list(range(0, 16, 2)))
        unavailable = python_rule("pt_run_complete", "raising_rules.py", "StepUnavailableAtStep1", "--keep-going")
        self.assertEqual((unavailable.code, unavailable.fired()), (1, [2]), unavailable)
        end = python_rule("pt_run_complete", "raising_rules.py", "EndsAtStep3")
        self.assertEqual(end.code, 0, end)
        self.assertEqual(end.status["RuleEvaluationStatus"], "NoIssuesFound")
        self.assertEqual(end.status["Progress"]["LastStep"], 3, end.status)
        met = python_rule("pt_run_complete", "raising_rules.py", "RaisesConditionMet")
        self.assertEqual((met.code, met.fired()), (1, [1]), met)

    def test_a_python_exception_is_the_rules_error_with_its_traceback(self):
        run = python_rule("pt_run_complete", "raising_rules.py", "Crashes")
        self.assertEqual(run.code, 3, run)  # a rule that failed, as for any plugin (docs/run.md)
        self.assertEqual(run.status["RuleEvaluationStatus"], "Error")
        details = run.status["StatusDetails"]
        self.assertIn("ZeroDivisionError: division by zero", details)
        self.assertIn("raising_rules.py:", details)
        self.assertIn("in invoke_at_step: return 1 / 0", details)
        future = python_rule("pt_run_complete", "raising_rules.py", "ReadsTheFuture")
        self.assertEqual(future.status.get("RuleEvaluationStatus"), "Error", future)
        self.assertIn("StepNotYetAvailable", future.status["StatusDetails"])

    def test_parameters_are_keyword_arguments(self):
        run = python_rule("pt_run_complete", "raising_rules.py", "TakesParameters", "--param", "at=3",
                          "--param", "factor=4")
        self.assertEqual((run.code, run.fired()), (1, [6]), run)
        missing = python_rule("pt_run_complete", "raising_rules.py", "TakesParameters")
        self.assertEqual(missing.code, 2, missing)
        self.assertIn("Required argument at for TakesParameters is missing", missing.status["StatusDetails"])
        unknown = python_rule("pt_run_complete", "raising_rules.py", "TakesParameters", "--param", "at=1",
                              "--param", "atx=2")
        self.assertEqual(unknown.code, 2, unknown)
        self.assertIn("does not take parameter 'atx' (its constructor takes: at, factor)",
                      unknown.status["StatusDetails"])
        tolerated = python_rule("pt_run_complete", "raising_rules.py", "TakesParameters", "--param", "at=1",
                                "--param", "atx=2", "--allow-unknown-params")
        self.assertEqual((tolerated.code, tolerated.fired()), (1, [1]), tolerated)
        self.assertIn("unknown parameter 'atx' (ignored)", tolerated.err)
        start = python_rule("pt_run_complete", "raising_rules.py", "TakesStartStep", "--start-step", "5")
        self.assertEqual((start.code, start.fired()), (1, [5]), start)

    def test_other_trials(self):
        run = python_rule("pt_run_complete", "raising_rules.py", "UsesOtherTrials", "--other-trial",
                          os.path.join(FIXTURES, "pt_exploding"))
        self.assertEqual(run.code, 1, run)
        self.assertEqual(run.fired(), [0])

    def test_bad_files_and_classes_are_client_errors(self):
        no_class = python_rule("pt_run_complete", "raising_rules.py", "NoSuchRule")
        self.assertEqual(no_class.code, 2, no_class)
        self.assertIn("has no class NoSuchRule (classes: ", no_class.status["StatusDetails"])
        syntax = python_rule("pt_run_complete", "syntax_error_rule.py", "Broken")
        self.assertEqual(syntax.code, 2, syntax)
        self.assertIn("SyntaxError", syntax.status["StatusDetails"])
        self.assertIn("syntax_error_rule.py", syntax.status["StatusDetails"])
        missing = python_rule("pt_run_complete", "no_such_file.py", "Rule")
        self.assertEqual(missing.code, 2, missing)
        self.assertIn("no such Python file", missing.err)


if __name__ == "__main__":
    unittest.main()
