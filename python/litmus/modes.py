"""ModeKeys and StepState: smdebug's mode and step-availability enums (same names and values).

ModeKeys is an IntEnum, so ``ModeKeys.TRAIN == 1`` and ``int(mode)`` work, as do smdebug's
``mode.name`` and ``ModeKeys.TRAIN`` comparisons. Pure Python: importing it never loads the
C++ extension (the Python rule host relies on that).
"""
import enum


class ModeKeys(enum.IntEnum):
    """The mode a step was saved in; GLOBAL means global step numbers."""

    TRAIN = 1
    EVAL = 2
    PREDICT = 3
    GLOBAL = 4


class StepState(enum.IntEnum):
    """What ``trial.has_passed_step(step, mode)`` answers (smdebug's values)."""

    UNAVAILABLE = 0
    AVAILABLE = 1
    NOT_YET_AVAILABLE = 2


def to_mode(mode, default=ModeKeys.GLOBAL):
    """ModeKeys from None (the default), a ModeKeys member (litmus's or smdebug's), an int or a name."""
    if mode is None:
        return default
    if isinstance(mode, str):
        try:
            return ModeKeys[mode.strip().upper()]
        except KeyError:
            raise ValueError("unknown mode %r (TRAIN, EVAL, PREDICT or GLOBAL)" % mode) from None
    value = getattr(mode, "value", mode)
    try:
        return ModeKeys(int(value))
    except (TypeError, ValueError):
        raise ValueError("unknown mode %r (TRAIN, EVAL, PREDICT or GLOBAL)" % (mode,)) from None
