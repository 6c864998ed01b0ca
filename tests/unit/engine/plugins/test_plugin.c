/* Raw-C test plugins for the loader, host table and RuleInstance tests
 * (tests/unit/engine/plugin_loader_test.cc, rule_instance_test.cc). One source, one variant per
 * target, chosen by TEST_PLUGIN_VARIANT:
 *   1 GOOD         loader_good: VanishingGradient (a probe whose parameter `behavior` picks what
 *                  create / set_required_tensors / invoke_at_step do), StalledTrainingRule
 *                  (required parameter), NLPSequenceRatio (no parameters)
 *   2 DUP          loader_dup: another VanishingGradient (ambiguity)
 *   3 MAJOR        table claims ABI 2.0
 *   4 MINOR        table claims ABI 1.99
 *   5 NULL_CREATE  a rule without create
 *   6 ENTRY_FAILS  the entry refuses with set_error text
 *   7 EMPTY_NAME   a rule with an empty name
 *   8 NO_ENTRY     exports no litmus_plugin_entry_v1
 *   9 EXTRA_EXPORT a working plugin that also exports litmus_test_extra_symbol (built without the
 *                  helper's version script)
 * Thread-safety: g_host is written once by the entry; instances are independent. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "litmus/rule_abi.h"

#define STR(literal) \
  { (literal), sizeof(literal) - 1 }

static const litmus_host_api_t* g_host = NULL;

static inline void set_error(litmus_ctx_t* ctx, const char* message) {
  g_host->set_error(ctx, message, strlen(message));
}

static inline int str_eq(litmus_str_t s, const char* literal) {
  return s.size == strlen(literal) && (s.size == 0 || memcmp(s.data, literal, s.size) == 0);
}

static inline litmus_str_t cstr(const char* text) {
  litmus_str_t s = {text, strlen(text)};
  return s;
}

/* ---- VanishingGradient: the probe ---------------------------------------------------------- */
#if TEST_PLUGIN_VARIANT == 1

typedef struct probe {
  char threshold[64];
  char behavior[32];
  long long fire_at_step;
} probe_t;

static void copy_param(char* out, size_t out_size, litmus_str_t value) {
  size_t n = value.size < out_size - 1 ? value.size : out_size - 1;
  if (n > 0) memcpy(out, value.data, n);
  out[n] = '\0';
}

static litmus_status_t probe_create(litmus_ctx_t* ctx, const litmus_param_t* params, size_t param_count,
                                    litmus_rule_instance_t** instance) {
  probe_t* probe = (probe_t*)g_host->alloc(sizeof(probe_t));
  char fire[32] = "-1";
  size_t i;
  if (probe == NULL) {
    set_error(ctx, "out of memory");
    return LITMUS_INTERNAL;
  }
  memset(probe, 0, sizeof(*probe));
  for (i = 0; i < param_count; ++i) {
    if (str_eq(params[i].key, "threshold")) copy_param(probe->threshold, sizeof(probe->threshold), params[i].value);
    if (str_eq(params[i].key, "behavior")) copy_param(probe->behavior, sizeof(probe->behavior), params[i].value);
    if (str_eq(params[i].key, "fire_at_step")) copy_param(fire, sizeof(fire), params[i].value);
  }
  probe->fire_at_step = strtoll(fire, NULL, 10);
  if (strcmp(probe->behavior, "create_invalid") == 0) {
    set_error(ctx, "behavior: create_invalid requested");
    g_host->free(probe);
    return LITMUS_INVALID_CONFIG;
  }
  if (strcmp(probe->behavior, "create_internal") == 0) {
    set_error(ctx, "behavior: create_internal requested");
    g_host->free(probe);
    return LITMUS_INTERNAL;
  }
  if (strcmp(probe->behavior, "create_silent") == 0) {
    g_host->free(probe);
    return LITMUS_INVALID_CONFIG;
  }
  *instance = (litmus_rule_instance_t*)probe;
  return LITMUS_OK;
}

static void probe_destroy(litmus_rule_instance_t* instance) { g_host->free(instance); }

static litmus_status_t probe_set_required_tensors(litmus_rule_instance_t* instance, litmus_ctx_t* ctx, int64_t step) {
  const probe_t* probe = (const probe_t*)instance;
  int64_t steps[2];
  litmus_status_t status;
  if (strcmp(probe->behavior, "require_unknown") == 0) {
    steps[0] = step;
    return g_host->require_tensor(ctx, 0, cstr("no_such_tensor"), steps, 1, 0);
  }
  if (strcmp(probe->behavior, "report_in_set_required") == 0) g_host->report_violations(ctx, 5);
  steps[0] = step;
  status = g_host->require_tensor(ctx, 0, cstr("gradient/.*weight"), steps, 1, 1);
  if (status != LITMUS_OK) return status;
  /* The same tensor twice, at overlapping steps: the host merges them. */
  status = g_host->require_tensor(ctx, 0, cstr("CrossEntropyLoss_output_0"), steps, 1, 0);
  if (status != LITMUS_OK) return status;
  if (step > 0) {
    steps[0] = step - 1;
    steps[1] = step;
    status = g_host->require_tensor(ctx, 0, cstr("CrossEntropyLoss_output_0"), steps, 2, 0);
  }
  return status;
}

static litmus_status_t probe_invoke(litmus_rule_instance_t* instance, litmus_ctx_t* ctx, int64_t step) {
  const probe_t* probe = (const probe_t*)instance;
  litmus_tensor_view_t view;
  litmus_str_t no_worker = {NULL, 0};
  litmus_status_t status;
  char text[64];
  int64_t steps_at_zero = 0;
  if (strcmp(probe->behavior, "silent_error") == 0) return LITMUS_INTERNAL;
  if (strcmp(probe->behavior, "silent_skip") == 0) return LITMUS_TENSOR_UNAVAILABLE_FOR_STEP;
  if (strcmp(probe->behavior, "unknown_status") == 0) {
    set_error(ctx, "status 42 on purpose");
    return 42;
  }
  if (strcmp(probe->behavior, "require_in_invoke") == 0) {
    return g_host->require_tensor(ctx, 0, cstr("CrossEntropyLoss_output_0"), &steps_at_zero, 1, 0);
  }
  if (strcmp(probe->behavior, "handled_error") == 0) {
    /* A failed host call the rule handles: its text must not leak into the result. */
    memset(&view, 0, sizeof(view));
    view.struct_size = sizeof(view);
    (void)g_host->tensor_value(ctx, 0, cstr("no_such_tensor"), step, LITMUS_MODE_GLOBAL, no_worker, &view);
    return LITMUS_OK;
  }
  memset(&view, 0, sizeof(view));
  view.struct_size = sizeof(view);
  status = g_host->tensor_value(ctx, 0, cstr("gradient/Net_fc1.weight"), step, LITMUS_MODE_GLOBAL, no_worker, &view);
  if (status != LITMUS_OK) return status; /* the host recorded smdebug's text */
  g_host->report_violations(ctx, 1);
  g_host->report_detail(ctx, cstr("threshold"), cstr(probe->threshold));
  g_host->report_detail(ctx, cstr("behavior"), cstr(probe->behavior));
  snprintf(text, sizeof(text), "%u", (unsigned)view.rank);
  g_host->report_detail(ctx, cstr("rank"), cstr(text));
  snprintf(text, sizeof(text), "[%d, %lld]", (int)view.mode, (long long)view.mode_step);
  g_host->report_detail(ctx, cstr("mode"), cstr(text));
  return step == probe->fire_at_step ? LITMUS_CONDITION_MET : LITMUS_OK;
}

#endif /* TEST_PLUGIN_VARIANT == 1 */

#if TEST_PLUGIN_VARIANT != 8

/* ---- Rules that only need to exist ----------------------------------------------------------- */

static char g_token;

static litmus_status_t plain_create(litmus_ctx_t* ctx, const litmus_param_t* params, size_t param_count,
                                    litmus_rule_instance_t** instance) {
  (void)ctx;
  (void)params;
  (void)param_count;
  *instance = (litmus_rule_instance_t*)&g_token;
  return LITMUS_OK;
}

static void plain_destroy(litmus_rule_instance_t* instance) { (void)instance; }

static litmus_status_t plain_invoke(litmus_rule_instance_t* instance, litmus_ctx_t* ctx, int64_t step) {
  (void)instance;
  (void)ctx;
  (void)step;
  return LITMUS_OK;
}

#if TEST_PLUGIN_VARIANT == 1
static const litmus_param_spec_t kProbeParams[] = {
    {STR("threshold"), STR("float"), STR("0.0000001"), 0, 0, STR("limit for the gradient")},
    {STR("fire_at_step"), STR("int"), STR("-1"), 0, 0, STR("step at which the condition is met")},
    {STR("behavior"), STR("string"), STR("ok"), 0, 0, STR("what the probe does (see test_plugin.c)")},
};
static const litmus_param_spec_t kStalledParams[] = {
    {STR("threshold"), STR("int"), STR(""), 1, 0, STR("seconds without new data")},
};
#endif

#define DESCRIPTOR_FLAGS(name, params, count, create, destroy, srt, invoke, flags)                                  \
  {                                                                                                                 \
    sizeof(litmus_rule_descriptor_t), sizeof(litmus_param_spec_t), STR(name), STR("1.2.3"), STR("test rule " name), \
        params, count, create, destroy, srt, invoke, NULL, flags, 0                                                 \
  }
#define DESCRIPTOR(name, params, count, create, destroy, srt, invoke) \
  DESCRIPTOR_FLAGS(name, params, count, create, destroy, srt, invoke, 0)

#if TEST_PLUGIN_VARIANT == 1
#define PLUGIN_NAME "loader_good"
static const litmus_rule_descriptor_t kRules[] = {
    DESCRIPTOR("VanishingGradient", kProbeParams, 3, probe_create, probe_destroy, probe_set_required_tensors,
               probe_invoke),
    DESCRIPTOR("StalledTrainingRule", kStalledParams, 1, plain_create, plain_destroy, NULL, plain_invoke),
    DESCRIPTOR_FLAGS("NLPSequenceRatio", NULL, 0, plain_create, plain_destroy, NULL, plain_invoke,
                     LITMUS_RULE_STATELESS),
};
#elif TEST_PLUGIN_VARIANT == 2
#define PLUGIN_NAME "loader_dup"
static const litmus_rule_descriptor_t kRules[] = {
    DESCRIPTOR("VanishingGradient", NULL, 0, plain_create, plain_destroy, NULL, plain_invoke),
};
#elif TEST_PLUGIN_VARIANT == 5
#define PLUGIN_NAME "loader_null_create"
static const litmus_rule_descriptor_t kRules[] = {
    DESCRIPTOR("Fine", NULL, 0, plain_create, plain_destroy, NULL, plain_invoke),
    DESCRIPTOR("NoCreate", NULL, 0, NULL, plain_destroy, NULL, plain_invoke),
};
#elif TEST_PLUGIN_VARIANT == 7
#define PLUGIN_NAME "loader_empty_name"
static const litmus_rule_descriptor_t kRules[] = {
    DESCRIPTOR("", NULL, 0, plain_create, plain_destroy, NULL, plain_invoke),
};
#else
#define PLUGIN_NAME "loader_other"
static const litmus_rule_descriptor_t kRules[] = {
    DESCRIPTOR("OtherRule", NULL, 0, plain_create, plain_destroy, NULL, plain_invoke),
};
#endif

#if TEST_PLUGIN_VARIANT == 3
#define ABI_MAJOR 2
#else
#define ABI_MAJOR LITMUS_ABI_MAJOR
#endif
#if TEST_PLUGIN_VARIANT == 4
#define ABI_MINOR 99
#else
#define ABI_MINOR LITMUS_ABI_MINOR
#endif

static const litmus_plugin_api_t kPlugin = {
    sizeof(litmus_plugin_api_t),       ABI_MAJOR, ABI_MINOR, 0, STR(PLUGIN_NAME), STR("0.0.1"), kRules,
    sizeof(kRules) / sizeof(kRules[0])};

litmus_status_t litmus_plugin_entry_v1(const litmus_host_api_t* host, litmus_ctx_t* ctx,
                                       const litmus_plugin_api_t** out) {
  g_host = host;
#if TEST_PLUGIN_VARIANT == 6
  (void)out;
  (void)kPlugin;
  set_error(ctx, "entry refuses on purpose");
  return LITMUS_INVALID_CONFIG;
#else
  (void)ctx;
  *out = &kPlugin;
  return LITMUS_OK;
#endif
}

#if TEST_PLUGIN_VARIANT == 9
LITMUS_PLUGIN_EXPORT int litmus_test_extra_symbol(void) { return 9; }
#endif

#else /* NO_ENTRY */

LITMUS_PLUGIN_EXPORT int not_a_litmus_entry(void) { return g_host != NULL; }

#endif
