/* rogue_common.h — shared bits of the raw C plugins of the rogue gallery: a string-literal helper
 * and a do-nothing rule whose functions the gallery plugins reuse where they are not the point.
 * Thread-safety: g_host is written once by each plugin's entry before any rule runs. */
#ifndef LITMUS_TESTS_PLUGINS_ROGUE_COMMON_H_
#define LITMUS_TESTS_PLUGINS_ROGUE_COMMON_H_

#include <stddef.h>
#include <string.h>

#include "litmus/rule_abi.h"

#define ROGUE_STR(literal) { (literal), sizeof(literal) - 1 }

static const litmus_host_api_t* g_host = NULL;

/* A rule instance needs a non-NULL pointer; this one is never dereferenced. */
static char g_instance_token;

static inline void rogue_set_error(litmus_ctx_t* ctx, const char* message) {
  if (g_host != NULL && g_host->set_error != NULL) g_host->set_error(ctx, message, strlen(message));
}

static inline litmus_status_t rogue_create_ok(litmus_ctx_t* ctx, const litmus_param_t* params,
                                       size_t param_count, litmus_rule_instance_t** instance) {
  (void)ctx;
  (void)params;
  (void)param_count;
  *instance = (litmus_rule_instance_t*)&g_instance_token;
  return LITMUS_OK;
}

static inline void rogue_destroy(litmus_rule_instance_t* instance) { (void)instance; }

static inline litmus_status_t rogue_invoke_never(litmus_rule_instance_t* instance, litmus_ctx_t* ctx,
                                          int64_t step) {
  (void)instance;
  (void)ctx;
  (void)step;
  return LITMUS_OK;
}

#endif /* LITMUS_TESTS_PLUGINS_ROGUE_COMMON_H_ */
