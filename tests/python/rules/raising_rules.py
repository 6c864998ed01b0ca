# Rules whose exceptions must map to the runner's outcomes as smdebug's invoke_rule treats them.
from smdebug.exceptions import (NoMoreData, RuleEvaluationConditionMet, StepNotYetAvailable, StepUnavailable,
                                TensorUnavailableForStep)
from smdebug.rules.rule import Rule


class SkipsOddSteps(Rule):
    """Fires at every even step; odd steps raise TensorUnavailableForStep (skipped)."""

    def invoke_at_step(self, step):
        if step % 2:
            raise TensorUnavailableForStep("some/tensor", step)
        return True


class StepUnavailableAtStep1(Rule):
    def invoke_at_step(self, step):
        if step == 1:
            raise StepUnavailable(step, None)
        return step == 2


class EndsAtStep3(Rule):
    """NoMoreData ends the rule normally."""

    def invoke_at_step(self, step):
        if step == 3:
            raise NoMoreData(step, None, 3)
        return False


class RaisesConditionMet(Rule):
    def invoke_at_step(self, step):
        if step == 1:
            raise RuleEvaluationConditionMet(self.rule_name, step)
        return False


class Crashes(Rule):
    def invoke_at_step(self, step):
        if step == 2:
            return 1 / 0
        return False


class ReadsTheFuture(Rule):
    def invoke_at_step(self, step):
        raise StepNotYetAvailable(step + 1000, None)


class TakesParameters(Rule):
    """Fires at step int(at); `factor` must arrive as the string SageMaker passes."""

    def __init__(self, base_trial, at, factor="2"):
        super().__init__(base_trial)
        assert isinstance(at, str) and isinstance(factor, str)
        self.at = int(at) * int(factor) // 2

    def invoke_at_step(self, step):
        return step == self.at


class TakesStartStep(Rule):
    """Takes start_step, as Overfit does: the runner's key reaches a constructor that declares it."""

    def __init__(self, base_trial, start_step="0"):
        super().__init__(base_trial)
        self.first = int(start_step)

    def invoke_at_step(self, step):
        return step == self.first


class UsesOtherTrials(Rule):
    """Fires where the base and the other trial's loss differ."""

    def __init__(self, base_trial, other_trials=None):
        super().__init__(base_trial, other_trials=other_trials)

    def set_required_tensors(self, step):
        for trial in self.trials:
            self.req_tensors.add(trial.tensor_names(regex="loss|Loss")[0], steps=[step], trial=trial)

    def invoke_at_step(self, step):
        values = [t.value(step) for trial in self.trials for t in self.req_tensors.get(trial)]
        return len(self.trials) == 2 and bool((values[0] != values[1]).any())


class BrokenAtImport(Rule):
    pass
