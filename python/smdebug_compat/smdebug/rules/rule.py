"""smdebug.rules.rule.Rule: the base class of custom rules, with smdebug's semantics.

Subclasses override set_required_tensors(step) (optional) and invoke_at_step(step) (returns True
when the condition holds). invoke(step) waits for the step, declares and fetches the required
tensors and raises RuleEvaluationConditionMet when invoke_at_step returns True. Unlike smdebug
1.0.5+, action_str is optional, so rules written as the SageMaker docs show
(`super().__init__(base_trial)`) work unchanged; actions run only inside `litmus run`
(action_json), never from here.
"""
import logging

from litmus.exceptions import RuleEvaluationConditionMet
from smdebug.rules.req_tensors import RequiredTensors


class Rule:
    def __init__(self, base_trial, action_str="", other_trials=None):
        self.logger = logging.getLogger("smdebug.rules")
        self.base_trial = base_trial
        self.other_trials = list(other_trials) if other_trials else []
        self.trials = [base_trial] + self.other_trials
        # Inside `litmus run` the trial hands out the runner's RequiredTensors.
        factory = getattr(base_trial, "_litmus_required_tensors", None)
        self.req_tensors = factory(self.other_trials) if factory else RequiredTensors(base_trial, self.other_trials)
        self.rule_name = self.__class__.__name__
        self.action_str = action_str
        self.report = {"RuleTriggered": 0, "Violations": 0, "Details": {}, "Datapoints": 0, "RuleParameters": ""}

    def set_required_tensors(self, step):
        """Declares, with self.req_tensors.add(...), what invoke_at_step(step) reads (optional)."""

    def invoke_at_step(self, step):
        raise NotImplementedError("%s must implement invoke_at_step(self, step)" % self.rule_name)

    def invoke(self, step):
        self.base_trial.wait_for_steps([step])
        self.req_tensors.clear()
        self.set_required_tensors(step)
        self.req_tensors.fetch()
        if self.invoke_at_step(step):
            raise RuleEvaluationConditionMet(self.rule_name, step)
