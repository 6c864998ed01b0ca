# A rule that computes with numpy on the values it reads (value() returns numpy arrays): fires when
# the largest |gradient| element exceeds `threshold`, and prints/logs along the way (both go to
# litmus's log on stderr, never to stdout).
import logging

import numpy as np
from smdebug.rules.rule import Rule


class MaxAbsGradientRule(Rule):
    def __init__(self, base_trial, threshold="1.0"):
        super().__init__(base_trial)
        self.threshold = float(threshold)

    def set_required_tensors(self, step):
        for name in self.base_trial.tensor_names(collection="gradients"):
            self.req_tensors.add(name, steps=[step])

    def invoke_at_step(self, step):
        largest = max(float(np.max(np.abs(t.value(step)))) for t in self.req_tensors.get())
        print("step %d: max |gradient| %.6g" % (step, largest))
        logging.getLogger("my_rule").info("checked step %d", step)
        return largest > self.threshold
