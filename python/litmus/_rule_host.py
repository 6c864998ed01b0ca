"""The Python side of python_rule_host.so (python/rule_host/python_rule_host.cc), which imports it
inside `litmus run` after putting litmus/ and smdebug_compat/ first on sys.path.

It loads a rule file, builds the Rule subclass with SageMaker's RuleParameters as keyword
arguments (strings, as SageMaker passes them), calls its methods, and turns exceptions into the
plugin statuses the runner acts on (classify). Never imports litmus._core: the litmus binary
already holds the reader, and a second copy of its protobuf descriptors would abort the process.
"""
import importlib.util
import inspect
import io
import json
import logging
import os
import sys
import traceback

import _litmus_host  # the host-backed trial, created by python_rule_host.so
from litmus import exceptions as exc

# Plugin statuses (litmus/rule_abi.h), frozen values.
OK, CONDITION_MET, TENSOR_UNAVAILABLE_FOR_STEP, TENSOR_UNAVAILABLE, STEP_UNAVAILABLE = 0, 1, 2, 3, 4
NOT_YET_AVAILABLE, NO_MORE_DATA, INVALID_CONFIG, INTERNAL, INVALID_WORKER = 5, 6, 7, 8, 10

# Keys the runner also offers a rule (the job contract): passed only if the constructor takes them.
RUNNER_KEYS = {"start_step", "end_step"}

_LEVELS = [(logging.ERROR, 4), (logging.WARNING, 3), (logging.INFO, 2), (logging.DEBUG, 1)]


class _HostHandler(logging.Handler):
    """Python logging through litmus's logger (tagged with the rule whose call runs)."""

    def emit(self, record):
        try:
            level = next((ours for theirs, ours in _LEVELS if record.levelno >= theirs), 0)
            _litmus_host.log(level, self.format(record))
        except Exception:  # logging never raises
            pass


class _HostStream(io.TextIOBase):
    """print() in a rule: each line becomes a log line (stdout is the verdict table's)."""

    def __init__(self, level):
        super().__init__()
        self._level = level
        self._pending = ""

    def writable(self):
        return True

    def write(self, text):
        self._pending += text
        while "\n" in self._pending:
            line, self._pending = self._pending.split("\n", 1)
            _litmus_host.log(self._level, line)
        return len(text)

    def flush(self):
        if self._pending:
            _litmus_host.log(self._level, self._pending)
            self._pending = ""


def setup():
    root = logging.getLogger()
    root.handlers[:] = [_HostHandler()]
    root.setLevel(logging.DEBUG)
    sys.stdout = _HostStream(2)
    sys.stderr = _HostStream(3)


class ConfigError(Exception):
    """The rule file, class or parameters are wrong (a client error)."""


# Local copies of s3:// sources (path -> URI): messages name the URI the user gave.
_SOURCE_URIS = {}


def _load_class(source, class_name, local_path=None):
    """The class `class_name` of the file `source`; `local_path` is the runner's local copy of an
    s3:// source (fetched at job start), loaded exactly as a local file would be."""
    if local_path is None and source.startswith("s3://"):
        raise ConfigError("source_s3_uri %s: no local copy (the runner fetches s3:// sources)" % source)
    path = os.path.abspath(local_path if local_path is not None else source)
    if not os.path.isfile(path):
        raise ConfigError("source_s3_uri %s: no such file" % source)
    if local_path is not None:
        _SOURCE_URIS[path] = source
    stem = os.path.splitext(os.path.basename(path))[0]
    module_name = "litmus_rule_%s_%x" % ("".join(c if c.isalnum() else "_" for c in stem), abs(hash(path)))
    module = sys.modules.get(module_name)
    if module is None:
        folder = os.path.dirname(path)
        if folder not in sys.path:
            sys.path.append(folder)  # helpers beside the rule file are importable
        spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[module_name]
            raise
    cls = getattr(module, class_name, None)
    if not inspect.isclass(cls):
        classes = sorted(n for n, v in vars(module).items()
                         if inspect.isclass(v) and v.__module__ == module_name)
        raise ConfigError("%s has no class %s%s" % (source, class_name,
                                                    " (classes: %s)" % ", ".join(classes) if classes else ""))
    return cls


def create_rule(source, class_name, params_json, base_trial, other_trials, allow_unknown=False, local_path=None):
    """An instance of class_name from the file `source` (or its local copy `local_path`), as
    SageMaker's rule container builds it. A parameter the constructor does not take is an error,
    or with allow_unknown a warning."""
    cls = _load_class(source, class_name, local_path)
    try:
        params = json.loads(params_json)
    except ValueError as e:
        raise ConfigError("rule_parameters is not JSON: %s" % e) from None
    signature = inspect.signature(cls.__init__)
    accepted = list(signature.parameters.values())[1:]  # after self
    if not accepted:
        raise ConfigError("%s.__init__ must take base_trial" % class_name)
    takes_any = any(p.kind == p.VAR_KEYWORD for p in accepted)
    names = {p.name for p in accepted if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    first = accepted[0].name
    kwargs = {}
    unknown = []
    for key, value in params.items():
        if key in names or takes_any:
            kwargs[key] = value
        elif key not in RUNNER_KEYS:
            unknown.append(key)
    shown = sorted(names - {first, "other_trials", "action_str"})
    if unknown and allow_unknown:
        logging.getLogger("litmus").warning("rule %s: unknown parameter%s %s (ignored); its constructor takes: %s",
                                            class_name, "s" if len(unknown) > 1 else "",
                                            ", ".join("'%s'" % k for k in sorted(unknown)), ", ".join(shown) or "none")
    elif unknown:
        raise ConfigError("rule %s does not take parameter%s %s (its constructor takes: %s)" % (
            class_name, "s" if len(unknown) > 1 else "", ", ".join("'%s'" % k for k in sorted(unknown)),
            ", ".join(shown) or "no parameters"))
    if "other_trials" in names:
        kwargs["other_trials"] = list(other_trials)
    elif other_trials:
        raise ConfigError("rule %s takes no other_trials, but the job gives %d" % (class_name, len(other_trials)))
    for p in accepted[1:]:
        if p.name == "action_str" and p.default is p.empty and p.name not in kwargs:
            kwargs["action_str"] = ""  # actions run in the runner (action_json)
        elif p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.default is p.empty and p.name not in kwargs:
            raise ConfigError("Required argument %s for %s is missing" % (p.name, class_name))
    return cls(base_trial, **kwargs)


def call(rule, method, step):
    """rule.<method>(step); invoke_at_step's truth value, or True when it raised the condition itself."""
    try:
        result = getattr(rule, method)(step)
    except exc.RuleEvaluationConditionMet:
        return True
    return bool(result) if method == "invoke_at_step" else False


_STATUSES = [
    (exc.TensorUnavailableForStep, TENSOR_UNAVAILABLE_FOR_STEP),
    (exc.TensorUnavailable, TENSOR_UNAVAILABLE),
    (exc.StepUnavailable, STEP_UNAVAILABLE),
    (exc.StepNotYetAvailable, NOT_YET_AVAILABLE),
    (exc.NoMoreData, NO_MORE_DATA),
    (exc.InvalidWorker, INVALID_WORKER),
]


def _where(tb, frames=3):
    """The last frames of a traceback, one line: 'rule.py:12 in invoke_at_step: x = 1 / 0'."""
    parts = []
    ours = os.path.abspath(__file__)
    user = [f for f in traceback.extract_tb(tb) if os.path.abspath(f.filename) != ours]
    for frame in user[-frames:]:
        text = "%s:%s in %s" % (os.path.basename(frame.filename), frame.lineno, frame.name)
        if frame.line:
            text += ": " + frame.line.strip()
        parts.append(text)
    return " <- ".join(reversed(parts))


def classify(error, tb, fallback):
    """(status, one-line message) for an exception a rule raised: smdebug's exceptions map to the
    statuses the runner skips or ends on; anything else gets `fallback` (INVALID_CONFIG while the
    file is loaded and the rule built, a client error; INTERNAL from its methods: a rule that
    failed, exit 3 as for any plugin, docs/run.md) with the traceback's last lines."""
    for cls, status in _STATUSES:
        if isinstance(error, cls):
            return status, "%s: %s" % (type(error).__name__, error)
    if isinstance(error, ConfigError):
        return INVALID_CONFIG, str(error)
    # The traceback's last lines, so status.json and the failure file say where it happened.
    text = "".join(traceback.format_exception_only(type(error), error)).strip().replace("\n", " ")
    for path, uri in _SOURCE_URIS.items():  # a SyntaxError names the file: the URI, not the copy
        text = text.replace(path, uri)
    where = _where(tb)
    return fallback, "Python %s%s" % (text, " (at %s)" % where if where else "")
