"""The exceptions of smdebug's trial and rule API, with smdebug's names, arguments and texts.

``litmus`` raises them from its readers, and ``smdebug.exceptions`` (the compatibility layer)
re-exports these very classes, so ``except smdebug.exceptions.TensorUnavailableForStep`` catches
what litmus raises. Pure Python: importing it never loads the C++ extension.
"""
from litmus.modes import ModeKeys


def _mode_name(mode):
    return getattr(mode, "name", mode)


class SMDebugError(Exception):
    """Base class of smdebug's own errors."""


class LitmusError(Exception):
    """Base class of litmus's errors that smdebug has no class for."""


class DataLoss(LitmusError, IOError):
    """A record, index or collections file is corrupt or truncated (the message names file and offset)."""


class InvalidCollectionConfiguration(Exception):
    def __init__(self, c_name):
        super().__init__(c_name)
        self.c_name = c_name

    def __str__(self):
        return "Collection %s has not been configured. Please fill in tensor_name or include_regex" % self.c_name


class StepNotYetAvailable(Exception):
    """The step has not been seen yet; it may appear while training runs."""

    def __init__(self, step, mode):
        super().__init__(step, mode)
        self.step = step
        self.mode = mode

    def __str__(self):
        return "Step %s of mode %s not yet available" % (self.step, _mode_name(self.mode))


class MissingCollectionFiles(Exception):
    def __str__(self):
        return "Training job has ended. All the collection files could not be loaded"


class IndexReaderException(Exception):
    def __init__(self, message):
        super().__init__(message)
        self.message = message

    def __str__(self):
        return self.message


class StepUnavailable(Exception):
    """The step was not saved (it will never be)."""

    def __init__(self, step, mode):
        super().__init__(step, mode)
        self.step = step
        self.mode = mode

    def __str__(self):
        return "Step %s of mode %s is not available as it was not saved" % (self.step, _mode_name(self.mode))


class TensorUnavailableForStep(Exception):
    """The tensor was not saved at that step (it never will be)."""

    def __init__(self, tname, step, mode=ModeKeys.GLOBAL, has_reductions=False):
        super().__init__(tname, step, mode, has_reductions)
        self.step = step
        self.mode = mode
        self.tname = tname
        self.has_reductions = has_reductions

    def __str__(self):
        msg = "Value for tensor %s is not available for step %s with mode %s as it was not saved." % (
            self.tname, self.step, _mode_name(self.mode))
        if self.has_reductions:
            msg += (" This tensor has reductions saved for this step."
                    " You might want to query for the reductions.")
        return msg


class ShapeUnavailableForStep(Exception):
    def __init__(self, tname, step, mode=ModeKeys.GLOBAL):
        super().__init__(tname, step, mode)
        self.step = step
        self.mode = mode
        self.tname = tname

    def __str__(self):
        return "Shape for tensor %s is not available for step %s with mode %s as it was not saved." % (
            self.tname, self.step, _mode_name(self.mode))


class TensorUnavailable(Exception):
    """The tensor was never saved."""

    def __init__(self, tname):
        super().__init__(tname)
        self.tname = tname

    def __str__(self):
        return "Tensor %s was not saved." % self.tname


class InvalidWorker(Exception):
    """That worker did not write the step."""

    def __init__(self, worker):
        super().__init__(worker)
        self.worker = worker

    def __str__(self):
        return "Invalid Worker: %s" % self.worker


class NoMoreData(Exception):
    """Training ended and the step lies beyond the last one saved."""

    def __init__(self, step, mode, last_step):
        super().__init__(step, mode, last_step)
        self.step = step
        self.mode = mode
        self.last_step = last_step

    def __str__(self):
        return "Looking for step %s of mode %s and reached end of training. Max step available is %s" % (
            self.step, _mode_name(self.mode), self.last_step)


class RuleEvaluationConditionMet(Exception):
    """Raised by Rule.invoke when invoke_at_step returned True."""

    def __init__(self, rule_name, step, end_of_rule=False):
        super().__init__(rule_name, step, end_of_rule)
        self.rule_name = rule_name
        self.step = step
        self.end_of_rule = end_of_rule

    def __str__(self):
        return "Evaluation of the rule %s at step %s resulted in the condition being met" % (
            self.rule_name, self.step)


class InsufficientInformationForRuleInvocation(Exception):
    def __init__(self, rule_name, message):
        super().__init__(rule_name, message)
        self.rule_name = rule_name
        self.message = message

    def __str__(self):
        return "Insufficient information to invoke rule %s: %s" % (self.rule_name, self.message)


class NoMoreProfilerData(Exception):
    def __init__(self, timestamp):
        super().__init__(timestamp)
        self.timestamp = timestamp

    def __str__(self):
        return "Looking for timestamp %s and reached end of training." % self.timestamp


__all__ = [
    "SMDebugError", "LitmusError", "DataLoss", "InvalidCollectionConfiguration", "StepNotYetAvailable",
    "MissingCollectionFiles", "IndexReaderException", "StepUnavailable", "TensorUnavailableForStep",
    "ShapeUnavailableForStep", "TensorUnavailable", "InvalidWorker", "NoMoreData",
    "RuleEvaluationConditionMet", "InsufficientInformationForRuleInvocation", "NoMoreProfilerData",
]
