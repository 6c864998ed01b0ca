"""smdebug.exceptions: the very classes litmus raises (litmus/exceptions.py)."""
from litmus.exceptions import *  # noqa: F401,F403
from litmus.exceptions import __all__  # noqa: F401
