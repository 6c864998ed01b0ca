"""smdebug.core.modes: ModeKeys (TRAIN, EVAL, PREDICT, GLOBAL), litmus's own enum."""
from litmus.modes import ModeKeys  # noqa: F401

ALLOWED_MODES = [ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT, ModeKeys.GLOBAL]
ALLOWED_MODE_NAMES = [m.name for m in ALLOWED_MODES]
MODE_STEP_PLUGIN_NAME = "mode_step"
MODE_PLUGIN_NAME = "mode"
