"""smdebug.trials: create_trial on litmus's reader (litmus.create_trial)."""
import sys


def create_trial(path, name=None, range_steps=None, check=False, index_mode=True, cache=False, **kwargs):
    """smdebug's create_trial(path, name=None, range_steps=None, ...): a local folder or an s3:// prefix.

    name, check, index_mode and cache are accepted for compatibility and ignored (litmus always
    reads through the index and keeps a byte-bounded cache of decoded tensors).
    """
    del name, check, index_mode, cache
    if "_litmus_host" in sys.modules:
        raise RuntimeError("create_trial is not available inside a rule run by `litmus run`: the rule "
                           "reads base_trial and other_trials (pass more trials with --other-trial)")
    import litmus

    return litmus.create_trial(path, range_steps=range_steps, **kwargs)


__all__ = ["create_trial"]
