/* abi_1_0_rules: a raw C plugin built against the frozen ABI 1.0 header (abi_1_0/include), the way
 * every plugin of litmus 0.1.0 was: its rule descriptors are 104 bytes (no on_poll) and its table
 * claims ABI 1.0. A newer host must load it, step over its descriptors with their own stride and
 * run it unchanged (plugin-sdk/VERSIONING.md).
 *   OldFireAtStep  fires at the first global step >= fire_at_step (int, default 0)
 *   OldNeverFires  never fires
 * Thread-safety: g_host is written once by the entry; each instance is used by one thread. */
#include <stdlib.h>
#include <string.h>

#include "litmus/rule_abi.h"

_Static_assert(LITMUS_ABI_MINOR == 0 && sizeof(litmus_rule_descriptor_t) == 104,
               "abi_1_0_rules must be built against the frozen ABI 1.0 header");

#define STR(literal) { (literal), sizeof(literal) - 1 }

static const litmus_host_api_t* g_host = NULL;

typedef struct {
  long long fire_at_step;
} old_rule_t;

static litmus_status_t old_create(litmus_ctx_t* ctx, const litmus_param_t* params, size_t param_count,
                                  litmus_rule_instance_t** instance) {
  old_rule_t* rule = (old_rule_t*)g_host->alloc(sizeof(old_rule_t));
  size_t i;
  if (rule == NULL) {
    g_host->set_error(ctx, "out of memory", 13);
    return LITMUS_INTERNAL;
  }
  rule->fire_at_step = 0;
  for (i = 0; i < param_count; ++i) {
    if (params[i].key.size == 12 && memcmp(params[i].key.data, "fire_at_step", 12) == 0) {
      char text[32] = {0};
      memcpy(text, params[i].value.data, params[i].value.size < 31 ? params[i].value.size : 31);
      rule->fire_at_step = strtoll(text, NULL, 10);
    }
  }
  *instance = (litmus_rule_instance_t*)rule;
  return LITMUS_OK;
}

static void old_destroy(litmus_rule_instance_t* instance) { g_host->free(instance); }

static litmus_status_t old_fire_invoke(litmus_rule_instance_t* instance, litmus_ctx_t* ctx, int64_t step) {
  (void)ctx;
  return step >= ((old_rule_t*)instance)->fire_at_step ? LITMUS_CONDITION_MET : LITMUS_OK;
}

static litmus_status_t old_never_invoke(litmus_rule_instance_t* instance, litmus_ctx_t* ctx, int64_t step) {
  (void)instance;
  (void)ctx;
  (void)step;
  return LITMUS_OK;
}

static const litmus_param_spec_t kFireParams[] = {
    {STR("fire_at_step"), STR("int"), STR("0"), 0, 0, STR("first step at which the rule fires")},
};

/* Two rules, so that the host must use the plugin's 104-byte stride to find the second. */
static const litmus_rule_descriptor_t kRules[] = {
    {sizeof(litmus_rule_descriptor_t), sizeof(litmus_param_spec_t), STR("OldNeverFires"), STR("1.0.0"),
     STR("never fires (ABI 1.0 plugin)"), NULL, 0, old_create, old_destroy, NULL, old_never_invoke},
    {sizeof(litmus_rule_descriptor_t), sizeof(litmus_param_spec_t), STR("OldFireAtStep"), STR("1.0.0"),
     STR("fires at fire_at_step (ABI 1.0 plugin)"), kFireParams, 1, old_create, old_destroy, NULL,
     old_fire_invoke},
};

static const litmus_plugin_api_t kPlugin = {sizeof(litmus_plugin_api_t), LITMUS_ABI_MAJOR, LITMUS_ABI_MINOR, 0,
                                            STR("abi_1_0_rules"), STR("1.0.0"), kRules, 2};

litmus_status_t litmus_plugin_entry_v1(const litmus_host_api_t* host, litmus_ctx_t* ctx,
                                       const litmus_plugin_api_t** out) {
  (void)ctx;
  if (host == NULL || out == NULL) return LITMUS_INVALID_ARGUMENT;
  g_host = host;
  *out = &kPlugin;
  return LITMUS_OK;
}
