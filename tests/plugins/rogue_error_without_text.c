/* rogue_error_without_text: raw C rules that fail without calling set_error (a plugin bug the host
 * must name) and one that returns a status value the ABI does not define.
 *   ErrorWithoutText        invoke_at_step returns LITMUS_INTERNAL, no text
 *   CreateErrorWithoutText  create returns LITMUS_INVALID_CONFIG, no text
 *   UnknownStatus           invoke_at_step returns 42 (with text): must count as LITMUS_INTERNAL
 * Thread-safety: g_host is written once by the entry. */
#include "rogue_common.h"

static litmus_status_t invoke_error_without_text(litmus_rule_instance_t* instance,
                                                 litmus_ctx_t* ctx, int64_t step) {
  (void)instance;
  (void)ctx;
  (void)step;
  return LITMUS_INTERNAL;
}

static litmus_status_t create_error_without_text(litmus_ctx_t* ctx, const litmus_param_t* params,
                                                 size_t param_count,
                                                 litmus_rule_instance_t** instance) {
  (void)ctx;
  (void)params;
  (void)param_count;
  (void)instance;
  return LITMUS_INVALID_CONFIG;
}

static litmus_status_t invoke_unknown_status(litmus_rule_instance_t* instance, litmus_ctx_t* ctx,
                                             int64_t step) {
  (void)instance;
  (void)step;
  rogue_set_error(ctx, "UnknownStatus returns status 42 on purpose");
  return 42;
}

static const litmus_rule_descriptor_t kRules[] = {
    {sizeof(litmus_rule_descriptor_t), sizeof(litmus_param_spec_t), ROGUE_STR("ErrorWithoutText"),
     ROGUE_STR("1.0.0"), ROGUE_STR("invoke fails with LITMUS_INTERNAL and no text"), NULL, 0,
     rogue_create_ok, rogue_destroy, NULL, invoke_error_without_text, NULL, 0, 0},
    {sizeof(litmus_rule_descriptor_t), sizeof(litmus_param_spec_t),
     ROGUE_STR("CreateErrorWithoutText"), ROGUE_STR("1.0.0"),
     ROGUE_STR("create fails with LITMUS_INVALID_CONFIG and no text"), NULL, 0,
     create_error_without_text, rogue_destroy, NULL, rogue_invoke_never, NULL, 0, 0},
    {sizeof(litmus_rule_descriptor_t), sizeof(litmus_param_spec_t), ROGUE_STR("UnknownStatus"),
     ROGUE_STR("1.0.0"), ROGUE_STR("invoke returns the undefined status 42"), NULL, 0,
     rogue_create_ok, rogue_destroy, NULL, invoke_unknown_status, NULL, 0, 0},
};

static const litmus_plugin_api_t kPlugin = {sizeof(litmus_plugin_api_t), LITMUS_ABI_MAJOR,
                                            LITMUS_ABI_MINOR, 0,
                                            ROGUE_STR("rogue_error_without_text"),
                                            ROGUE_STR("1.0.0"), kRules,
                                            sizeof(kRules) / sizeof(kRules[0])};

litmus_status_t litmus_plugin_entry_v1(const litmus_host_api_t* host, litmus_ctx_t* ctx,
                                       const litmus_plugin_api_t** out) {
  (void)ctx;
  g_host = host;
  *out = &kPlugin;
  return LITMUS_OK;
}
