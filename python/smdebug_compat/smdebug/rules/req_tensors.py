"""smdebug.rules.req_tensors.RequiredTensors: what a rule's invoke_at_step(step) reads.

add() records (tensor, steps) per trial in insertion order; fetch() waits for the steps and reads
every value, so a missing one raises TensorUnavailableForStep before invoke_at_step runs (as
smdebug does), but reads them in parallel through litmus's reader instead of one by one.
Inside `litmus run` a rule gets the runner's RequiredTensors instead (python_rule_host.so), which
declares the requirements to the runner so that it prefetches them.
"""
from litmus.exceptions import TensorUnavailable


class RequiredTensors:
    def __init__(self, base_trial, other_trials=None):
        self.base_trial = base_trial
        self.other_trials = list(other_trials or [])
        self.all_trials = [base_trial] + self.other_trials
        self._required = {}  # id(trial) -> (trial, {name: [steps]})
        self._reductions_only = set()  # (id(trial), name): fetch reads no raw value

    def _entries(self, trial):
        trial = self.base_trial if trial is None else trial
        key = id(trial)
        if key not in self._required:
            self._required[key] = (trial, {})
        return trial, self._required[key][1]

    def add(self, name, steps, trial=None, should_match_regex=False, reductions_only=False):
        """Requires `name` (every name the regex searches, with should_match_regex) at `steps`.
        TensorUnavailable for an exact name the trial never saved. reductions_only=True (a litmus
        extension): the rule reads only reduction_value of it, so fetch needs no raw value."""
        trial, entries = self._entries(trial)
        names = trial.tensor_names(regex=name) if should_match_regex else [name]
        if not should_match_regex and not trial.has_tensor(name):
            raise TensorUnavailable(name)
        for n in names:
            entries.setdefault(n, []).extend(int(s) for s in steps)
            if reductions_only:
                self._reductions_only.add((id(trial), n))

    def get_names(self, trial=None):
        return list(self._entries(trial)[1])

    def get_tensor_steps(self, name, trial=None):
        return list(self._entries(trial)[1][name])

    def get(self, trial=None):
        trial, entries = self._entries(trial)
        return [trial.tensor(n) for n in entries]

    def fetch(self):
        """Waits for every required step of each trial, then reads every required value (may raise
        StepUnavailable, NoMoreData or TensorUnavailableForStep, as smdebug's fetch)."""
        for trial, entries in list(self._required.values()):
            steps = sorted({s for ss in entries.values() for s in ss})
            if not steps:
                continue
            trial.wait_for_steps(steps)
            keys = [(n, s) for n, ss in entries.items() for s in ss
                    if (id(trial), n) not in self._reductions_only]
            prefetch = getattr(trial, "_prefetch", None)
            if prefetch is not None:
                prefetch(keys)
            for n, s in keys:
                trial.tensor(n).value(s)

    def clear(self):
        self._required = {}
        self._reductions_only = set()
