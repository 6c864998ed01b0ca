/* rogue_no_entry: a shared object without litmus_plugin_entry_v1 (it exports a misspelled
 * litmus_plugin_entry instead). Built with plain add_library(MODULE), not the plugin helper.
 * Thread-safety: no state. */
#include "litmus/rule_abi.h"

__attribute__((visibility("default"))) litmus_status_t litmus_plugin_entry(
    const litmus_host_api_t* host, litmus_ctx_t* ctx, const litmus_plugin_api_t** out) {
  (void)host;
  (void)ctx;
  *out = 0;
  return LITMUS_INTERNAL;
}
