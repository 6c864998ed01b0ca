// Where python_rule_host.so is (python/rule_host: the plugin that runs smdebug rules written in
// Python). It is loaded by path for a rule with a source_s3_uri (`litmus run --python-rule`),
// never from the plugin search folders. Pure function; thread-safe.
#pragma once

#include <string>

#include "litmus/status.h"

namespace litmus {

// In order: $LITMUS_PYTHON_RULE_HOST; a binary running from the build tree: <build>/python/; an
// installed one: <prefix>/<libdir>/litmus/python/. NotFound (one line saying how to get it) if the
// file does not exist: litmus was built without pybind11/Python (LITMUS_BUILD_PYTHON).
StatusOr<std::string> PythonRuleHostPath();

}  // namespace litmus
