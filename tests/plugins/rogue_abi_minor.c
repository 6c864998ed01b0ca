/* rogue_abi_minor: its table claims ABI 1.99 and its entry does not check the host: the host
 * itself must refuse the table ("needs ABI 1.99, litmus provides 1.1").
 * Thread-safety: static tables only. */
#include "rogue_common.h"

static const litmus_rule_descriptor_t kRules[] = {
    {sizeof(litmus_rule_descriptor_t), sizeof(litmus_param_spec_t), ROGUE_STR("AbiMinorNinetyNine"),
     ROGUE_STR("1.0.0"), ROGUE_STR("never fires; its plugin claims ABI 1.99"), NULL, 0,
     rogue_create_ok, rogue_destroy, NULL, rogue_invoke_never, NULL, 0, 0},
};

static const litmus_plugin_api_t kPlugin = {sizeof(litmus_plugin_api_t), LITMUS_ABI_MAJOR, 99, 0,
                                            ROGUE_STR("rogue_abi_minor"), ROGUE_STR("1.0.0"),
                                            kRules, 1};

litmus_status_t litmus_plugin_entry_v1(const litmus_host_api_t* host, litmus_ctx_t* ctx,
                                       const litmus_plugin_api_t** out) {
  (void)ctx;
  g_host = host;
  *out = &kPlugin;
  return LITMUS_OK;
}
