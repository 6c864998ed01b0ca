"""The smdebug compatibility package (python/smdebug_compat): code written for smdebug runs
unchanged on litmus's reader. The SageMaker docs' CustomGradientRule (rules/custom_gradient_rule.py)
is run on every fixture at three thresholds, step by step with Rule.invoke and as a whole with
invoke_rule, and must do what smdebug recorded in the fixtures' expected.json (rule_outcomes):
fire on the same steps and raise the same exceptions (except NameError, a record smdebug cannot
read and litmus can: docs/compatibility.md).
Run: PYTHONPATH=<build>/python:<build>/python/smdebug_compat python3 -m unittest ...
"""
import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "rules"))
os.environ["SMDEBUG_TRAINING_END_DELAY_REFRESH"] = "0"

import litmus  # noqa: E402
import smdebug.exceptions  # noqa: E402
from custom_gradient_rule import CustomGradientRule  # noqa: E402
from smdebug.core.modes import ModeKeys  # noqa: E402
from smdebug.exceptions import NoMoreData, RuleEvaluationConditionMet, TensorUnavailable  # noqa: E402
from smdebug.rules import Rule  # noqa: E402
from smdebug.rules.req_tensors import RequiredTensors  # noqa: E402
from smdebug.rules.rule_invoker import invoke_rule  # noqa: E402
from smdebug.trials import create_trial  # noqa: E402

FIXTURES = os.path.join(HERE, "..", "fixtures", "smdebug")
FIXTURE_NAMES = ["pt_exploding", "synthetic_dtypes", "pt_ddp_two_workers", "pt_run_partial", "pt_run_complete"]
THRESHOLDS = ["0.001", "0.1", "10.0"]


def expected_outcomes(fixture, threshold):
    with open(os.path.join(FIXTURES, fixture + ".expected.json")) as f:
        outcomes = json.load(f)["rule_outcomes"]
    return outcomes["steps_tried"], outcomes["rules"]["CustomGradientRule(threshold=%s)" % threshold]


class Recording(CustomGradientRule):
    """The docs' rule, recording the steps where it fired."""

    def __init__(self, base_trial, threshold):
        super().__init__(base_trial, threshold=threshold)
        self.fired = []

    def invoke_at_step(self, step):
        met = super().invoke_at_step(step)
        if met:
            self.fired.append(step)
        return met


class CustomGradientRuleTest(unittest.TestCase):
    def test_invoke_gives_smdebugs_outcome_at_every_step(self):
        for fixture in FIXTURE_NAMES:
            for threshold in THRESHOLDS:
                steps, want = expected_outcomes(fixture, threshold)
                rule = CustomGradientRule(create_trial(os.path.join(FIXTURES, fixture)), threshold=threshold)
                for step in steps:
                    try:
                        rule.invoke(step)
                        got = "not_triggered"
                    except RuleEvaluationConditionMet as e:
                        self.assertEqual((e.rule_name, e.step), ("CustomGradientRule", step))
                        got = "triggered"
                    except Exception as e:  # noqa: BLE001 (compared with smdebug's class)
                        got = type(e).__name__
                    expected = want[str(step)]
                    if expected == "NameError":
                        continue  # smdebug cannot read the record (real payload CRC); litmus can
                    self.assertEqual(expected, got, "%s threshold %s step %d" % (fixture, threshold, step))

    def test_invoke_rule_fires_where_smdebug_fired(self):
        for fixture in FIXTURE_NAMES:
            for threshold in THRESHOLDS:
                steps, want = expected_outcomes(fixture, threshold)
                rule = Recording(create_trial(os.path.join(FIXTURES, fixture)), threshold)
                finished = fixture != "pt_run_partial"
                end_step = None if finished else max(steps) + 1  # in progress: smdebug would wait
                if finished:
                    with self.assertRaises(NoMoreData):  # HEAD's invoke_rule lets it propagate
                        invoke_rule(rule, start_step=0, end_step=end_step)
                else:
                    invoke_rule(rule, start_step=0, end_step=end_step)
                fired = {int(s) for s, v in want.items() if v == "triggered"}
                unknown = {int(s) for s, v in want.items() if v == "NameError"}
                self.assertEqual(fired, set(rule.fired) - unknown, "%s threshold %s" % (fixture, threshold))

    def test_raise_eval_cond_and_start_end_step(self):
        trial = create_trial(os.path.join(FIXTURES, "pt_exploding"))
        with self.assertRaises(RuleEvaluationConditionMet) as e:
            invoke_rule(CustomGradientRule(trial, threshold="10.0"), start_step=2, raise_eval_cond=True)
        self.assertEqual(e.exception.step, 4)
        rule = Recording(trial, "10.0")
        invoke_rule(rule, start_step=5, end_step=7)
        self.assertEqual(rule.fired, [5, 6])


class CompatApiTest(unittest.TestCase):
    def test_exceptions_and_modes_are_litmuss(self):
        self.assertIs(smdebug.exceptions.TensorUnavailableForStep, litmus.exceptions.TensorUnavailableForStep)
        self.assertIs(ModeKeys, litmus.ModeKeys)
        self.assertEqual(str(smdebug.exceptions.StepUnavailable(3, ModeKeys.TRAIN)),
                         "Step 3 of mode TRAIN is not available as it was not saved")

    def test_required_tensors(self):
        trial = create_trial(os.path.join(FIXTURES, "pt_run_complete"))
        req = RequiredTensors(trial, [])
        with self.assertRaises(TensorUnavailable):
            req.add("no/such/tensor", steps=[0])
        req.add("^gradient/", steps=[0, 1], should_match_regex=True)
        req.add("no-match-is-fine", steps=[0], should_match_regex=True)
        self.assertEqual(req.get_names(), trial.tensor_names(collection="gradients"))
        self.assertEqual(req.get_tensor_steps(req.get_names()[0]), [0, 1])
        self.assertEqual([t.name for t in req.get()], req.get_names())
        req.fetch()
        req.add("^gradient/", steps=[6], should_match_regex=True)  # EVAL: no gradients
        with self.assertRaises(smdebug.exceptions.TensorUnavailableForStep):
            req.fetch()

    def test_rules_of_the_old_and_new_constructor_forms(self):
        trial = create_trial(os.path.join(FIXTURES, "pt_run_complete"))

        class New(Rule):
            def __init__(self, base_trial, action_str, other_trials=None):
                super().__init__(base_trial, action_str, other_trials=other_trials)

            def invoke_at_step(self, step):
                return step == 1

        rule = New(trial, "", other_trials=[trial])
        self.assertEqual(len(rule.trials), 2)
        rule.invoke(0)
        with self.assertRaises(RuleEvaluationConditionMet):
            rule.invoke(1)


if __name__ == "__main__":
    unittest.main()
