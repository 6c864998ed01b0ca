"""smdebug.rules: Rule, invoke_rule and RequiredTensors with smdebug's semantics."""
from smdebug.rules.req_tensors import RequiredTensors  # noqa: F401
from smdebug.rules.rule import Rule  # noqa: F401
from smdebug.rules.rule_invoker import invoke_rule  # noqa: F401
