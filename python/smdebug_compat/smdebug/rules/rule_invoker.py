"""smdebug.rules.rule_invoker.invoke_rule: the invoke loop of smdebug's rule container.

Walks global steps from start_step (default 0) up to end_step (exclusive; None: until the data
ends) and calls rule.invoke(step). TensorUnavailableForStep, StepUnavailable and
TensorUnavailable move on to the next step; RuleEvaluationConditionMet is logged (re-raised with
raise_eval_cond=True) and ends the loop only if its end_of_rule is set; NoMoreData and every
other exception propagate (NoMoreData is the normal end of a finished trial).
"""
import logging

from litmus.exceptions import (RuleEvaluationConditionMet, StepUnavailable, TensorUnavailable,
                               TensorUnavailableForStep)

logger = logging.getLogger("smdebug.rules")


def invoke_rule(rule_obj, start_step=0, end_step=None, raise_eval_cond=False):
    step = start_step if start_step is not None else 0
    name = type(rule_obj).__name__
    logger.info("Started execution of rule %s at step %s", name, step)
    while end_step is None or step < end_step:
        try:
            rule_obj.invoke(step)
        except (TensorUnavailableForStep, StepUnavailable, TensorUnavailable) as e:
            logger.debug(str(e))
        except RuleEvaluationConditionMet as e:
            if raise_eval_cond:
                raise
            logger.info(str(e))
            if e.end_of_rule:
                break
        step += 1
    logger.info("Ended execution of rule %s at end_step %s", name, end_step)
