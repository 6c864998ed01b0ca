/* abi_layout_test.c — freezes the LP64 layout of every litmus/rule_abi.h struct and the value of
 * every enumeration constant. Compiled as C11 for _Static_assert: an accidental change fails the
 * build. An intended change is an ABI change: update VERSIONING.md and these numbers together.
 * Thread-safety: no code runs. */
#include <stddef.h>

#include "litmus/rule_abi.h"

#define SIZE(type, size) _Static_assert(sizeof(type) == (size), "sizeof(" #type ") changed")
#define AT(type, member, offset) \
  _Static_assert(offsetof(type, member) == (offset), #type "." #member " moved")
#define VALUE(name, value) _Static_assert((name) == (value), #name " changed")

/* The layout below is that of ABI 1.3; members added since 1.0 say so. */
VALUE(LITMUS_ABI_MAJOR, 1);
VALUE(LITMUS_ABI_MINOR, 3);
VALUE(LITMUS_REQUIRE_REGEX, 1);
VALUE(LITMUS_REQUIRE_REDUCTIONS_ONLY, 2);
VALUE(LITMUS_FIRES_ABOVE, 1);
VALUE(LITMUS_FIRES_BELOW, 2);
VALUE(LITMUS_RULE_STATELESS, 1);

#if defined(__LP64__)
SIZE(litmus_str_t, 16);
AT(litmus_str_t, data, 0);
AT(litmus_str_t, size, 8);

SIZE(litmus_tensor_view_t, 80);
AT(litmus_tensor_view_t, struct_size, 0);
AT(litmus_tensor_view_t, dtype, 4);
AT(litmus_tensor_view_t, data, 8);
AT(litmus_tensor_view_t, byte_size, 16);
AT(litmus_tensor_view_t, shape, 24);
AT(litmus_tensor_view_t, rank, 32);
AT(litmus_tensor_view_t, reserved0, 36);
AT(litmus_tensor_view_t, num_elements, 40);
AT(litmus_tensor_view_t, strings, 48);
AT(litmus_tensor_view_t, step, 56);
AT(litmus_tensor_view_t, mode, 64);
AT(litmus_tensor_view_t, reserved1, 68);
AT(litmus_tensor_view_t, mode_step, 72);

SIZE(litmus_tensor_query_t, 56);
AT(litmus_tensor_query_t, struct_size, 0);
AT(litmus_tensor_query_t, reserved0, 4);
AT(litmus_tensor_query_t, collection, 8);
AT(litmus_tensor_query_t, regex, 24);
AT(litmus_tensor_query_t, step, 40);
AT(litmus_tensor_query_t, mode, 48);
AT(litmus_tensor_query_t, reserved1, 52);

SIZE(litmus_param_t, 32);
AT(litmus_param_t, key, 0);
AT(litmus_param_t, value, 16);

SIZE(litmus_host_api_t, 192); /* 1.0: 152, 1.1: 160, 1.2: 168 */
AT(litmus_host_api_t, struct_size, 0);
AT(litmus_host_api_t, abi_major, 4);
AT(litmus_host_api_t, abi_minor, 8);
AT(litmus_host_api_t, reserved0, 12);
AT(litmus_host_api_t, set_error, 16);
AT(litmus_host_api_t, log, 24);
AT(litmus_host_api_t, alloc, 32);
AT(litmus_host_api_t, free, 40);
AT(litmus_host_api_t, trial_count, 48);
AT(litmus_host_api_t, steps, 56);
AT(litmus_host_api_t, step_mode, 64);
AT(litmus_host_api_t, global_step, 72);
AT(litmus_host_api_t, workers, 80);
AT(litmus_host_api_t, tensor_names, 88);
AT(litmus_host_api_t, tensor_steps, 96);
AT(litmus_host_api_t, tensor_value, 104);
AT(litmus_host_api_t, tensor_reduction, 112);
AT(litmus_host_api_t, tensor_shape, 120);
AT(litmus_host_api_t, require_tensor, 128);
AT(litmus_host_api_t, report_violations, 136);
AT(litmus_host_api_t, report_detail, 144);
AT(litmus_host_api_t, add_action, 152); /* since 1.1 */
AT(litmus_host_api_t, require_tensor_ex, 160); /* since 1.2 */
AT(litmus_host_api_t, report_series, 168); /* since 1.3 */
AT(litmus_host_api_t, report_threshold, 176); /* since 1.3 */
AT(litmus_host_api_t, report_recommendation, 184); /* since 1.3 */

SIZE(litmus_param_spec_t, 72);
AT(litmus_param_spec_t, name, 0);
AT(litmus_param_spec_t, type, 16);
AT(litmus_param_spec_t, default_value, 32);
AT(litmus_param_spec_t, required, 48);
AT(litmus_param_spec_t, reserved0, 52);
AT(litmus_param_spec_t, description, 56);

SIZE(litmus_rule_descriptor_t, 120); /* 1.0: 104, 1.1: 112 */
AT(litmus_rule_descriptor_t, struct_size, 0);
AT(litmus_rule_descriptor_t, param_spec_size, 4);
AT(litmus_rule_descriptor_t, name, 8);
AT(litmus_rule_descriptor_t, version, 24);
AT(litmus_rule_descriptor_t, description, 40);
AT(litmus_rule_descriptor_t, params, 56);
AT(litmus_rule_descriptor_t, param_count, 64);
AT(litmus_rule_descriptor_t, create, 72);
AT(litmus_rule_descriptor_t, destroy, 80);
AT(litmus_rule_descriptor_t, set_required_tensors, 88);
AT(litmus_rule_descriptor_t, invoke_at_step, 96);
AT(litmus_rule_descriptor_t, on_poll, 104); /* since 1.1 */
AT(litmus_rule_descriptor_t, flags, 112);   /* since 1.2 */
AT(litmus_rule_descriptor_t, reserved1, 116);

SIZE(litmus_plugin_api_t, 64);
AT(litmus_plugin_api_t, struct_size, 0);
AT(litmus_plugin_api_t, abi_major, 4);
AT(litmus_plugin_api_t, abi_minor, 8);
AT(litmus_plugin_api_t, reserved0, 12);
AT(litmus_plugin_api_t, plugin_name, 16);
AT(litmus_plugin_api_t, plugin_version, 32);
AT(litmus_plugin_api_t, rules, 48);
AT(litmus_plugin_api_t, rule_count, 56);
#endif

SIZE(litmus_status_t, 4);
VALUE(LITMUS_OK, 0);
VALUE(LITMUS_CONDITION_MET, 1);
VALUE(LITMUS_TENSOR_UNAVAILABLE_FOR_STEP, 2);
VALUE(LITMUS_TENSOR_UNAVAILABLE, 3);
VALUE(LITMUS_STEP_UNAVAILABLE, 4);
VALUE(LITMUS_NOT_YET_AVAILABLE, 5);
VALUE(LITMUS_NO_MORE_DATA, 6);
VALUE(LITMUS_INVALID_CONFIG, 7);
VALUE(LITMUS_INTERNAL, 8);
VALUE(LITMUS_INVALID_ARGUMENT, 9);
VALUE(LITMUS_INVALID_WORKER, 10);

VALUE(LITMUS_MODE_TRAIN, 1);
VALUE(LITMUS_MODE_EVAL, 2);
VALUE(LITMUS_MODE_PREDICT, 3);
VALUE(LITMUS_MODE_GLOBAL, 4);

VALUE(LITMUS_DTYPE_FLOAT32, 1);
VALUE(LITMUS_DTYPE_FLOAT64, 2);
VALUE(LITMUS_DTYPE_INT32, 3);
VALUE(LITMUS_DTYPE_UINT8, 4);
VALUE(LITMUS_DTYPE_INT16, 5);
VALUE(LITMUS_DTYPE_INT8, 6);
VALUE(LITMUS_DTYPE_STRING, 7);
VALUE(LITMUS_DTYPE_COMPLEX64, 8);
VALUE(LITMUS_DTYPE_INT64, 9);
VALUE(LITMUS_DTYPE_BOOL, 10);
VALUE(LITMUS_DTYPE_UINT16, 17);
VALUE(LITMUS_DTYPE_COMPLEX128, 18);
VALUE(LITMUS_DTYPE_FLOAT16, 19);
VALUE(LITMUS_DTYPE_UINT32, 22);
VALUE(LITMUS_DTYPE_UINT64, 23);

VALUE(LITMUS_REDUCTION_MIN, 0);
VALUE(LITMUS_REDUCTION_MAX, 1);
VALUE(LITMUS_REDUCTION_MEAN, 2);
VALUE(LITMUS_REDUCTION_STD, 3);
VALUE(LITMUS_REDUCTION_VARIANCE, 4);
VALUE(LITMUS_REDUCTION_SUM, 5);
VALUE(LITMUS_REDUCTION_PROD, 6);
VALUE(LITMUS_REDUCTION_L1, 7);
VALUE(LITMUS_REDUCTION_L2, 8);

VALUE(LITMUS_LOG_TRACE, 0);
VALUE(LITMUS_LOG_DEBUG, 1);
VALUE(LITMUS_LOG_INFO, 2);
VALUE(LITMUS_LOG_WARNING, 3);
VALUE(LITMUS_LOG_ERROR, 4);

int main(void) { return 0; }
