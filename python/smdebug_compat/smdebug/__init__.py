"""smdebug, as litmus provides it: the trial and rule API of smdebug 1.0.34 on litmus's C++ reader.

An opt-in compatibility package (`cmake --install BUILD --component smdebug_compat`, or
PYTHONPATH=<build>/python/smdebug_compat) so that code written for smdebug runs unchanged:
smdebug.trials.create_trial, smdebug.rules.Rule / invoke_rule / RequiredTensors,
smdebug.exceptions and smdebug.core.modes.ModeKeys. The hook side (training) is not provided.
Inside `litmus run --python-rule` it is always on the path. See docs/python.md.
"""
from smdebug.core.modes import ModeKeys  # noqa: F401  (smdebug exports modes at the top)

__version__ = "1.0.34+litmus"
