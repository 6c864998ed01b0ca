/* abi_c99_test.c — litmus/rule_abi.h must compile as strict C99 (-std=c99 -pedantic -Wall -Wextra
 * -Werror, set by tests/abi/CMakeLists.txt) and be usable from C: this translation unit fills
 * every table type the way a raw C plugin does. Thread-safety: single-threaded test. */
#include <stddef.h>
#include <string.h>

#include "litmus/rule_abi.h"

/* C99 has no _Static_assert: the classic negative-array-size check. */
#define C99_ASSERT(name, condition) typedef char c99_assert_##name[(condition) ? 1 : -1]

C99_ASSERT(entry_name, sizeof(LITMUS_PLUGIN_ENTRY_NAME) == sizeof("litmus_plugin_entry_v1"));
C99_ASSERT(abi_major, LITMUS_ABI_MAJOR == 1);

static litmus_status_t create(litmus_ctx_t* ctx, const litmus_param_t* params, size_t count,
                              litmus_rule_instance_t** instance) {
  (void)ctx;
  (void)params;
  (void)count;
  *instance = NULL;
  return LITMUS_INVALID_CONFIG;
}

static void destroy(litmus_rule_instance_t* instance) { (void)instance; }

static litmus_status_t invoke(litmus_rule_instance_t* instance, litmus_ctx_t* ctx, int64_t step) {
  (void)instance;
  (void)ctx;
  return step > 0 ? LITMUS_CONDITION_MET : LITMUS_OK;
}

int main(void) {
  static const litmus_param_spec_t params[] = {
      {{"threshold", 9}, {"float", 5}, {"10.0", 4}, 0, 0, {"limit", 5}}};
  litmus_rule_descriptor_t rule;
  litmus_plugin_api_t plugin;
  litmus_tensor_query_t query;
  litmus_tensor_view_t view;
  litmus_plugin_entry_fn entry = NULL;
  litmus_rule_instance_t* instance = NULL;

  memset(&rule, 0, sizeof(rule));
  rule.struct_size = sizeof(rule);
  rule.param_spec_size = sizeof(litmus_param_spec_t);
  rule.params = params;
  rule.param_count = 1;
  rule.create = create;
  rule.destroy = destroy;
  rule.set_required_tensors = NULL;
  rule.invoke_at_step = invoke;

  memset(&plugin, 0, sizeof(plugin));
  plugin.struct_size = sizeof(plugin);
  plugin.abi_major = LITMUS_ABI_MAJOR;
  plugin.abi_minor = LITMUS_ABI_MINOR;
  plugin.rules = &rule;
  plugin.rule_count = 1;

  memset(&query, 0, sizeof(query));
  query.struct_size = sizeof(query);
  query.step = -1;
  memset(&view, 0, sizeof(view));
  view.struct_size = sizeof(view);

  (void)entry;
  if (plugin.rules[0].create(NULL, NULL, 0, &instance) != LITMUS_INVALID_CONFIG) return 1;
  plugin.rules[0].destroy(instance);
  if (plugin.rules[0].invoke_at_step(NULL, NULL, 1) != LITMUS_CONDITION_MET) return 2;
  return query.struct_size == sizeof(query) && view.struct_size == sizeof(view) ? 0 : 3;
}
