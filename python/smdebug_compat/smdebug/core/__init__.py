"""smdebug.core: only modes (ModeKeys) is provided by litmus."""
