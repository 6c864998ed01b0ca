/* raw_c_rule: CustomGradientRule ("fires when the mean absolute value of any tensor of collection
 * `gradients` exceeds `threshold`, default 10.0") in plain C99 against litmus/rule_abi.h, exporting
 * litmus_plugin_entry_v1 itself. The rule is registered as "RawCGradientRule".
 * Thread-safety: the only global is the host table pointer, written once by the entry before any
 * rule runs; each instance is used by one thread at a time (the host's contract). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "litmus/rule_abi.h"

#define STR(literal) { (literal), sizeof(literal) - 1 }

/* Set by the entry; the host table lives as long as the process. */
static const litmus_host_api_t* g_host = NULL;

typedef struct {
  double threshold;
} rule_state_t;

static void set_error(litmus_ctx_t* ctx, const char* message) {
  g_host->set_error(ctx, message, strlen(message));
}

static int is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* Parses a float parameter: surrounding whitespace allowed, "None" or empty means "use the
   default". Returns 0 on success, -1 for text that is not a number. */
static int parse_float(litmus_str_t text, double fallback, double* out) {
  char buffer[300];
  const char* begin = text.data;
  size_t size = text.size;
  char* end = NULL;
  while (size > 0 && is_space(*begin)) {
    ++begin;
    --size;
  }
  while (size > 0 && is_space(begin[size - 1])) --size;
  if (size == 0 || (size == 4 && memcmp(begin, "None", 4) == 0)) {
    *out = fallback;
    return 0;
  }
  if (size >= sizeof(buffer)) return -1;
  memcpy(buffer, begin, size);
  buffer[size] = '\0';
  *out = strtod(buffer, &end);
  return end == buffer + size ? 0 : -1;
}

static litmus_status_t rule_create(litmus_ctx_t* ctx, const litmus_param_t* params,
                                   size_t param_count, litmus_rule_instance_t** instance) {
  double threshold = 10.0;
  rule_state_t* state = NULL;
  size_t i;
  for (i = 0; i < param_count; ++i) {
    if (params[i].key.size == 9 && memcmp(params[i].key.data, "threshold", 9) == 0 &&
        parse_float(params[i].value, 10.0, &threshold) != 0) {
      char message[400];
      const int shown = params[i].value.size > 256 ? 256 : (int)params[i].value.size;
      snprintf(message, sizeof(message), "threshold: expected a number, got '%.*s'", shown,
               params[i].value.data != NULL ? params[i].value.data : "");
      set_error(ctx, message);
      return LITMUS_INVALID_CONFIG;
    }
  }
  state = (rule_state_t*)g_host->alloc(sizeof(rule_state_t));
  if (state == NULL) {
    set_error(ctx, "out of memory");
    return LITMUS_INTERNAL;
  }
  state->threshold = threshold;
  *instance = (litmus_rule_instance_t*)state;
  return LITMUS_OK;
}

static void rule_destroy(litmus_rule_instance_t* instance) { g_host->free(instance); }

static litmus_status_t gradient_names(litmus_ctx_t* ctx, const litmus_str_t** names,
                                      size_t* count) {
  litmus_tensor_query_t query;
  memset(&query, 0, sizeof(query));
  query.struct_size = sizeof(query);
  query.collection.data = "gradients";
  query.collection.size = 9;
  query.step = -1;
  query.mode = 0;
  return g_host->tensor_names(ctx, 0, &query, names, count);
}

/* Requires every gradient at `step` so that the host prefetches them. */
static litmus_status_t rule_set_required_tensors(litmus_rule_instance_t* instance,
                                                 litmus_ctx_t* ctx, int64_t step) {
  const litmus_str_t* names = NULL;
  size_t count = 0;
  size_t i;
  litmus_status_t status = gradient_names(ctx, &names, &count);
  (void)instance;
  if (status != LITMUS_OK) return status; /* the host recorded the message */
  for (i = 0; i < count; ++i) {
    status = g_host->require_tensor(ctx, 0, names[i], &step, 1, 0);
    if (status != LITMUS_OK) return status;
  }
  return LITMUS_OK;
}

static litmus_status_t rule_invoke_at_step(litmus_rule_instance_t* instance, litmus_ctx_t* ctx,
                                           int64_t step) {
  const rule_state_t* state = (const rule_state_t*)instance;
  const litmus_str_t* names = NULL;
  size_t count = 0;
  size_t i;
  litmus_status_t status = gradient_names(ctx, &names, &count);
  if (status != LITMUS_OK) return status;
  for (i = 0; i < count; ++i) {
    double abs_mean = 0;
    litmus_str_t no_worker = {NULL, 0};
    status = g_host->tensor_reduction(ctx, 0, names[i], step, LITMUS_MODE_GLOBAL,
                                      LITMUS_REDUCTION_MEAN, 1, no_worker, &abs_mean);
    /* Unavailable tensors and steps skip the step, as smdebug's exceptions do; the host already
       recorded the message. */
    if (status != LITMUS_OK) return status;
    if (abs_mean > state->threshold) { /* NaN compares false: never fires; +inf fires */
      g_host->report_violations(ctx, 1);
      return LITMUS_CONDITION_MET;
    }
  }
  return LITMUS_OK;
}

static const litmus_param_spec_t kParams[] = {
    {STR("threshold"), STR("float"), STR("10.0"), 0, 0,
     STR("limit for the mean absolute value of each gradient")},
};

static const litmus_rule_descriptor_t kRules[] = {
    {sizeof(litmus_rule_descriptor_t), sizeof(litmus_param_spec_t), STR("RawCGradientRule"),
     STR("1.0.0"), STR("Fires when the mean absolute value of any gradient exceeds threshold"),
     kParams, sizeof(kParams) / sizeof(kParams[0]), rule_create, rule_destroy,
     rule_set_required_tensors, rule_invoke_at_step, NULL /* on_poll (ABI 1.1): none */,
     0 /* flags (ABI 1.2): keeps state between steps */, 0},
};

static const litmus_plugin_api_t kPlugin = {
    sizeof(litmus_plugin_api_t), LITMUS_ABI_MAJOR, LITMUS_ABI_MINOR, 0, STR("raw_c_rule"),
    STR("1.0.0"), kRules, sizeof(kRules) / sizeof(kRules[0])};

litmus_status_t litmus_plugin_entry_v1(const litmus_host_api_t* host, litmus_ctx_t* ctx,
                                       const litmus_plugin_api_t** out) {
  /* The last host function this plugin calls must lie within the host's table. */
  const size_t needed =
      offsetof(litmus_host_api_t, report_violations) + sizeof(host->report_violations);
  if (host == NULL || out == NULL) return LITMUS_INVALID_ARGUMENT;
  *out = NULL;
  if (host->struct_size < offsetof(litmus_host_api_t, log)) return LITMUS_INVALID_ARGUMENT;
  /* Majors equal, host minor >= the minor this plugin was built with (its table says which). */
  if (host->abi_major != kPlugin.abi_major || host->abi_minor < kPlugin.abi_minor) {
    char message[128];
    snprintf(message, sizeof(message), "plugin raw_c_rule needs ABI %u.%u, litmus provides %u.%u",
             (unsigned)kPlugin.abi_major, (unsigned)kPlugin.abi_minor, (unsigned)host->abi_major,
             (unsigned)host->abi_minor);
    if (host->set_error != NULL) host->set_error(ctx, message, strlen(message));
    return LITMUS_INVALID_CONFIG;
  }
  if (host->struct_size < needed) {
    const char* message = "plugin raw_c_rule: the host table is too small";
    if (host->set_error != NULL) host->set_error(ctx, message, strlen(message));
    return LITMUS_INVALID_CONFIG;
  }
  g_host = host;
  *out = &kPlugin;
  return LITMUS_OK;
}
