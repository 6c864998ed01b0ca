/* rogue_extra_export: a working plugin (rule ExtraExport, never fires) that also exports a second
 * symbol, litmus_rogue_extra_symbol. Built with plain add_library(MODULE) and default visibility,
 * bypassing the plugin helper's version script; tests/abi's export check must flag it.
 * Thread-safety: static tables only. */
#include "rogue_common.h"

__attribute__((visibility("default"))) int litmus_rogue_extra_symbol(void) { return 42; }

static const litmus_rule_descriptor_t kRules[] = {
    {sizeof(litmus_rule_descriptor_t), sizeof(litmus_param_spec_t), ROGUE_STR("ExtraExport"),
     ROGUE_STR("1.0.0"), ROGUE_STR("never fires; its plugin exports a second symbol"), NULL, 0,
     rogue_create_ok, rogue_destroy, NULL, rogue_invoke_never, NULL, 0, 0},
};

static const litmus_plugin_api_t kPlugin = {sizeof(litmus_plugin_api_t), LITMUS_ABI_MAJOR,
                                            LITMUS_ABI_MINOR, 0, ROGUE_STR("rogue_extra_export"),
                                            ROGUE_STR("1.0.0"), kRules, 1};

litmus_status_t litmus_plugin_entry_v1(const litmus_host_api_t* host, litmus_ctx_t* ctx,
                                       const litmus_plugin_api_t** out) {
  (void)ctx;
  g_host = host;
  *out = &kPlugin;
  return LITMUS_OK;
}
