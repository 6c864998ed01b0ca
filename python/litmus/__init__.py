"""litmus: smdebug's trial API on litmus's C++ reader.

    import litmus
    trial = litmus.create_trial("/path/to/trial")          # or "s3://bucket/prefix"
    trial.steps(), trial.tensor_names(collection="gradients")
    trial.tensor("gradient/fc1.weight").value(3)           # read-only numpy array, no copy
    trial.tensor("gradient/fc1.weight").values([0, 1, 2])   # one stacked array, read in parallel

Names, arguments and exceptions follow smdebug (see docs/python.md for the differences). The C++
extension (litmus._core) is loaded on first use: ``litmus.exceptions`` and ``litmus.modes`` are
pure Python and importable without it (the Python rule host imports only those).
"""
import importlib
import sys

from litmus.modes import ModeKeys, StepState

__all__ = ["create_trial", "Trial", "Tensor", "Collection", "ModeKeys", "StepState", "exceptions"]

_LAZY = {"create_trial", "Trial", "Tensor", "Collection", "__version__"}


def __getattr__(name):
    # PEP 562: the extension (and with it protobuf, TBB, the reader) loads only when needed.
    if name in _LAZY:
        if "_litmus_host" in sys.modules:
            # Inside `litmus run` (python_rule_host.so): the runner's reader is already loaded, and
            # a second copy would abort the process. Rules read base_trial and other_trials.
            raise ImportError("litmus.%s is not available inside a rule run by `litmus run`; read the "
                              "rule's base_trial and other_trials (--other-trial) instead" % name)
        core = importlib.import_module("litmus._core")
        return getattr(core, name)
    if name == "exceptions":
        return importlib.import_module("litmus.exceptions")
    raise AttributeError("module 'litmus' has no attribute %r" % name)


def __dir__():
    return sorted(set(globals()) | _LAZY | {"exceptions"})
