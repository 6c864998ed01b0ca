/** \file
 * litmus/rule_abi.h — the stable C ABI between the litmus engine (host) and rule plugins.
 *
 * Pure C (C99), includes only <stddef.h> and <stdint.h>. Rules are usually written against the
 * C++ layer in litmus/rule.hpp, which implements everything below; this header is the contract.
 *
 * Shape (an hourglass): a plugin is a shared object exporting exactly one symbol,
 * LITMUS_PLUGIN_ENTRY (litmus_plugin_entry_v1). The host dlopens it, calls the entry with its host
 * table, and gets back the plugin's static table of rules. Rules then run through function
 * pointers; they call back into the host only through the host table. No C++ type, exception,
 * allocator or STL object crosses this boundary.
 *
 * Versioning (plugin-sdk/VERSIONING.md): a plugin built for ABI major M and minor m loads in a host
 * with the same major M and minor >= m. Tables start with struct_size, abi_major, abi_minor; new
 * fields are only ever appended (marked "since 1.N"); nobody reads past the other side's
 * struct_size. A breaking change is a new entry symbol (litmus_plugin_entry_v2).
 *
 * Ownership, the general rule:
 *   - Strings are pointer + length (litmus_str_t), UTF-8, not necessarily NUL-terminated.
 *   - Everything the host returns (views, arrays, strings) is BORROWED: valid until the callback
 *     that received it returns. Copy what you need to keep.
 *   - Everything the plugin returns (its tables, descriptors, instance pointers) stays valid until
 *     the instance is destroyed (instance data) or forever (static tables: the host never
 *     dlcloses a plugin).
 *   - Error text goes through host->set_error(ctx, ...), which copies it at once. A plugin that
 *     returns an error status without calling set_error is buggy; the host reports that.
 *   - Memory that must outlive a call is the plugin's own business; host->alloc/free are offered
 *     so plugins need not link an allocator of their own.
 * Threading, the general rule:
 *   - One thread at a time per rule instance; different instances may run concurrently on
 *     different threads.
 *   - A litmus_ctx_t is valid only during the call that received it and only on that thread.
 *   - Plugins start no threads and keep only trivial globals.
 */
#ifndef LITMUS_RULE_ABI_H_
#define LITMUS_RULE_ABI_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LITMUS_ABI_MAJOR 1 /**< the ABI major version of this header (a break: a new entry) */
#define LITMUS_ABI_MINOR 3 /**< the ABI minor version of this header (appended members) */
#define LITMUS_PLUGIN_ENTRY litmus_plugin_entry_v1 /**< the one symbol a plugin exports */
#define LITMUS_PLUGIN_ENTRY_NAME "litmus_plugin_entry_v1" /**< its name, for dlsym */

#if defined(_WIN32)
#define LITMUS_PLUGIN_EXPORT __declspec(dllexport)
#else
/** Marks the entry as exported (default visibility); plugins build with hidden visibility. */
#define LITMUS_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* ---- Status codes: what smdebug expresses with exceptions. Values are frozen. ---------------- */
/** The outcome of every plugin function and host query: LITMUS_OK or another LITMUS_* status. */
typedef int32_t litmus_status_t;
#define LITMUS_OK 0                          /**< success; from invoke_at_step: condition NOT met */
#define LITMUS_CONDITION_MET 1               /**< invoke_at_step: RuleEvaluationConditionMet */
#define LITMUS_TENSOR_UNAVAILABLE_FOR_STEP 2 /**< the tensor was not saved at that step: skip step */
#define LITMUS_TENSOR_UNAVAILABLE 3          /**< the tensor was never saved: skip step */
#define LITMUS_STEP_UNAVAILABLE 4            /**< the step was not saved: skip step */
#define LITMUS_NOT_YET_AVAILABLE 5           /**< data not there yet (a future step was asked for) */
#define LITMUS_NO_MORE_DATA 6                /**< training ended; nothing more to evaluate */
#define LITMUS_INVALID_CONFIG 7              /**< bad parameters (create) or bad configuration */
#define LITMUS_INTERNAL 8                    /**< any other failure: a bug, corrupt data, ... */
#define LITMUS_INVALID_ARGUMENT 9            /**< a host call was misused (bad trial index, regex) */
#define LITMUS_INVALID_WORKER 10             /**< that worker did not write the step */
/* Any other value returned by a plugin is treated as LITMUS_INTERNAL. */

/* ---- Plain data ------------------------------------------------------------------------------ */
/** A string: pointer + length, UTF-8, not necessarily NUL-terminated. */
typedef struct litmus_str {
  const char* data; /**< may be NULL when size == 0 */
  size_t size;      /**< bytes at data */
} litmus_str_t;

/* Modes (smdebug ModeKeys). */
#define LITMUS_MODE_TRAIN 1 /**< TRAIN */
#define LITMUS_MODE_EVAL 2 /**< EVAL */
#define LITMUS_MODE_PREDICT 3 /**< PREDICT */
#define LITMUS_MODE_GLOBAL 4 /**< GLOBAL: steps are global steps */

/* Element types: TensorFlow DataType values. Strings use LITMUS_DTYPE_STRING. */
#define LITMUS_DTYPE_FLOAT32 1 /**< float32 */
#define LITMUS_DTYPE_FLOAT64 2 /**< float64 */
#define LITMUS_DTYPE_INT32 3 /**< int32 */
#define LITMUS_DTYPE_UINT8 4 /**< uint8 */
#define LITMUS_DTYPE_INT16 5 /**< int16 */
#define LITMUS_DTYPE_INT8 6 /**< int8 */
#define LITMUS_DTYPE_STRING 7 /**< string (litmus_tensor_view_t.strings) */
#define LITMUS_DTYPE_COMPLEX64 8 /**< complex64 */
#define LITMUS_DTYPE_INT64 9 /**< int64 */
#define LITMUS_DTYPE_BOOL 10 /**< bool, one byte 0 or 1 */
#define LITMUS_DTYPE_UINT16 17 /**< uint16 */
#define LITMUS_DTYPE_COMPLEX128 18 /**< complex128 */
#define LITMUS_DTYPE_FLOAT16 19 /**< float16 (IEEE binary16) */
#define LITMUS_DTYPE_UINT32 22 /**< uint32 */
#define LITMUS_DTYPE_UINT64 23 /**< uint64 */

/* Reductions (reduction_value in smdebug). */
#define LITMUS_REDUCTION_MIN 0 /**< min */
#define LITMUS_REDUCTION_MAX 1 /**< max */
#define LITMUS_REDUCTION_MEAN 2 /**< mean */
#define LITMUS_REDUCTION_STD 3 /**< std (population) */
#define LITMUS_REDUCTION_VARIANCE 4 /**< variance (population) */
#define LITMUS_REDUCTION_SUM 5 /**< sum */
#define LITMUS_REDUCTION_PROD 6 /**< prod */
#define LITMUS_REDUCTION_L1 7 /**< l1 norm */
#define LITMUS_REDUCTION_L2 8 /**< l2 norm */

/* Log levels for host->log. */
#define LITMUS_LOG_TRACE 0 /**< trace */
#define LITMUS_LOG_DEBUG 1 /**< debug */
#define LITMUS_LOG_INFO 2 /**< info */
#define LITMUS_LOG_WARNING 3 /**< warning */
#define LITMUS_LOG_ERROR 4 /**< error */

/** A borrowed, zero-copy view of one tensor value, filled by host->tensor_value. The caller sets
   struct_size to its own sizeof(litmus_tensor_view_t) before the call; the host writes at most that
   many bytes and sets struct_size to the number of bytes it filled (the smaller of both sizes). */
typedef struct litmus_tensor_view {
  uint32_t struct_size;       /**< in: the caller's size; out: the bytes the host filled */
  int32_t dtype;              /**< LITMUS_DTYPE_* */
  const void* data;           /**< little-endian C-order elements, aligned to the element size;
                                 NULL for strings and zero-element tensors */
  uint64_t byte_size;         /**< bytes at data */
  const int64_t* shape;       /**< rank entries, outermost first; NULL when rank == 0 */
  uint32_t rank;              /**< number of dimensions (0 for a scalar) */
  uint32_t reserved0;         /**< zero */
  int64_t num_elements;       /**< product of the dimensions (1 for a scalar) */
  const litmus_str_t* strings;/**< string tensors: num_elements entries; else NULL */
  int64_t step;               /**< global step the value was read at */
  int32_t mode;               /**< LITMUS_MODE_* of that step */
  int32_t reserved1;          /**< zero */
  int64_t mode_step;          /**< the mode step of that step */
} litmus_tensor_view_t;

/** Selects tensor names. Fields left empty/negative do not filter. The caller sets struct_size to its
   own sizeof(litmus_tensor_query_t); the host reads no field beyond it (missing fields: no filter). */
typedef struct litmus_tensor_query {
  uint32_t struct_size;       /**< the caller's sizeof(litmus_tensor_query_t) */
  uint32_t reserved0;         /**< zero */
  litmus_str_t collection;    /**< member of this collection (listed names ∪ regex matches) */
  litmus_str_t regex;         /**< Python `re.search` semantics: matches anywhere in the name */
  int64_t step;               /**< saved at this global step; -1 = any step */
  int32_t mode;               /**< saved in this mode; 0 = any mode */
  int32_t reserved1;          /**< zero */
} litmus_tensor_query_t;

/** A string parameter as given by the user (after defaults were applied by the host). Frozen: this
   pair never grows, so arrays of it have the stride sizeof(litmus_param_t) forever. */
typedef struct litmus_param {
  litmus_str_t key;   /**< the parameter's name */
  litmus_str_t value; /**< its text */
} litmus_param_t;

/** Opaque per-call context the host passes to every plugin function; valid during that call only,
    on its thread. */
typedef struct litmus_ctx litmus_ctx_t;

/* ---- Host table: services the engine offers plugins ------------------------------------------ */
/** The host table: services the engine offers plugins, passed to the entry.
 * Every function: Required (non-NULL in every host of the minor that introduced it; 1.0 unless
 * marked "since 1.N"). Threading: only on the thread of the call that received ctx, only during
 * that call. Ownership: outputs are borrowed until that call returns. `trial` indexes the trials
 * of the job: 0 = base trial, 1.. = other trials. Query functions return LITMUS_OK or a status;
 * on error they have already recorded a message that the plugin may pass on or replace with
 * set_error. */
typedef struct litmus_host_api {
  uint32_t struct_size; /**< sizeof(litmus_host_api_t) of the host: read no byte beyond it */
  uint32_t abi_major;   /**< LITMUS_ABI_MAJOR of the host */
  uint32_t abi_minor;   /**< LITMUS_ABI_MINOR of the host */
  uint32_t reserved0;   /**< zero */

  /** Records the error text of the failing call; copied at once. Repeated calls replace it. */
  void (*set_error)(litmus_ctx_t* ctx, const char* message, size_t size);
  /** Logs one line through the engine's logger at LITMUS_LOG_* level, tagged with the rule. */
  void (*log)(litmus_ctx_t* ctx, int32_t level, const char* message, size_t size);
  /** Heap memory for the plugin, aligned like malloc; alloc returns NULL on failure; free(NULL) is
     a no-op. Thread-safe; ctx is not needed. */
  void* (*alloc)(size_t size);
  /** Frees memory from alloc (see alloc). */
  void (*free)(void* pointer);

  /** Number of trials (1 + other trials). */
  uint32_t (*trial_count)(litmus_ctx_t* ctx);
  /** Steps of a trial: global steps (mode = LITMUS_MODE_GLOBAL) or mode steps of a mode, sorted,
     complete steps only. */
  litmus_status_t (*steps)(litmus_ctx_t* ctx, uint32_t trial, int32_t mode, const int64_t** steps,
                           size_t* count);
  /** (mode, mode_step) of a global step. LITMUS_STEP_UNAVAILABLE if the step is not known. */
  litmus_status_t (*step_mode)(litmus_ctx_t* ctx, uint32_t trial, int64_t step, int32_t* mode,
                               int64_t* mode_step);
  /** Global step of a mode step. LITMUS_STEP_UNAVAILABLE if unknown. */
  litmus_status_t (*global_step)(litmus_ctx_t* ctx, uint32_t trial, int32_t mode, int64_t mode_step,
                                 int64_t* step);
  /** Worker names of a trial, sorted. */
  litmus_status_t (*workers)(litmus_ctx_t* ctx, uint32_t trial, const litmus_str_t** workers,
                             size_t* count);
  /** Tensor names matching a query, sorted. An unknown collection gives an empty list. */
  litmus_status_t (*tensor_names)(litmus_ctx_t* ctx, uint32_t trial, const litmus_tensor_query_t* query,
                                  const litmus_str_t** names, size_t* count);
  /** Global steps at which a tensor was saved (mode = LITMUS_MODE_GLOBAL) or its mode steps of a
     mode. LITMUS_TENSOR_UNAVAILABLE for a name never saved. */
  litmus_status_t (*tensor_steps)(litmus_ctx_t* ctx, uint32_t trial, litmus_str_t name, int32_t mode,
                                  const int64_t** steps, size_t* count);
  /** The value of a tensor at a step (a global step for LITMUS_MODE_GLOBAL, else a mode step).
     worker.size == 0: the lexicographically first worker that wrote the step. Outcomes:
     LITMUS_TENSOR_UNAVAILABLE, LITMUS_TENSOR_UNAVAILABLE_FOR_STEP, LITMUS_STEP_UNAVAILABLE,
     LITMUS_NOT_YET_AVAILABLE, LITMUS_NO_MORE_DATA, LITMUS_INVALID_WORKER, LITMUS_INTERNAL. */
  litmus_status_t (*tensor_value)(litmus_ctx_t* ctx, uint32_t trial, litmus_str_t name, int64_t step,
                                  int32_t mode, litmus_str_t worker, litmus_tensor_view_t* out);
  /** A reduction (LITMUS_REDUCTION_*) of |x| if abs != 0, else of x: the stored reduction if the
     trial has one, else computed from the value (docs/compatibility.md). Same outcomes as
     tensor_value, plus LITMUS_INVALID_ARGUMENT when undefined (e.g. min of an empty tensor). */
  litmus_status_t (*tensor_reduction)(litmus_ctx_t* ctx, uint32_t trial, litmus_str_t name, int64_t step,
                                      int32_t mode, int32_t reduction, uint32_t abs, litmus_str_t worker,
                                      double* out);
  /** The shape of a tensor at a step (from a stored shape if any, else from the value). */
  litmus_status_t (*tensor_shape)(litmus_ctx_t* ctx, uint32_t trial, litmus_str_t name, int64_t step,
                                  int32_t mode, litmus_str_t worker, const int64_t** shape,
                                  uint32_t* rank);

  /** Only valid inside set_required_tensors: requires tensor `name` (or, with should_match_regex,
     every tensor whose name the regex searches) of `trial` at each of `steps` (global steps). The
     host prefetches them before invoke_at_step. LITMUS_TENSOR_UNAVAILABLE for an exact name the
     trial never saved (smdebug's RequiredTensors.add raises it). Must not have side effects
     beyond recording the requirement (the host may call set_required_tensors ahead of time). */
  litmus_status_t (*require_tensor)(litmus_ctx_t* ctx, uint32_t trial, litmus_str_t name,
                                    const int64_t* steps, size_t step_count, uint32_t should_match_regex);

  /** Report (rule-reports/RULE.json): adds to the Violations count. Only inside invoke_at_step
     (and, since 1.1, on_poll). */
  void (*report_violations)(litmus_ctx_t* ctx, int64_t count);
  /** Report: sets Details.KEY (key) to a JSON value given as text (invalid JSON is stored as a
     string). Only inside invoke_at_step (and, since 1.1, on_poll). */
  void (*report_detail)(litmus_ctx_t* ctx, litmus_str_t key, litmus_str_t json_value);

  /** since 1.1 ----------------------------------------------------------------------------------
     Required in a host that reports minor >= 1 (and whose struct_size covers it).
     Only valid inside create: registers, for the rule instance being created, one more action to
     run when that rule's condition is met, besides those of the job's `action_json` parameter.
     action_json uses that parameter's JSON form (docs/job-contract.md §8): one object such as
     {"name": "stoptraining", "training_job_prefix": "PREFIX"}, or a list of such objects.
     Ownership: copied at once. Outcomes: LITMUS_OK; LITMUS_INVALID_ARGUMENT outside create, or
     for text that is not a JSON object or list of objects (with an error text). Which actions
     exist and what they do is the host's business (StopTraining, Email, SMS). */
  litmus_status_t (*add_action)(litmus_ctx_t* ctx, litmus_str_t action_json);

  /** since 1.2 ----------------------------------------------------------------------------------
     Required in a host that reports minor >= 2 (and whose struct_size covers it).
     require_tensor with flags (LITMUS_REQUIRE_*): LITMUS_REQUIRE_REGEX is require_tensor's
     should_match_regex; LITMUS_REQUIRE_REDUCTIONS_ONLY says the rule reads only reductions of the
     tensor at those steps, so a step where the trial holds saved reductions but no raw value is
     still evaluated. Without it (and with require_tensor), such a step is skipped before
     invoke_at_step, as smdebug's RequiredTensors.fetch does (it reads every required value).
     A name required both ways at a step needs its raw value. Unknown flag bits:
     LITMUS_INVALID_ARGUMENT. Otherwise as require_tensor. */
  litmus_status_t (*require_tensor_ex)(litmus_ctx_t* ctx, uint32_t trial, litmus_str_t name,
                                       const int64_t* steps, size_t step_count, uint32_t flags);

  /** since 1.3 ----------------------------------------------------------------------------------
     Required in a host that reports minor >= 3 (and whose struct_size covers it). What the rule
     watched, for the job's HTML report and TensorBoard output (docs/report.md); never part of the
     verdict, never a failure: misuse is logged and ignored, as for report_detail. Other
     fires_when values are reserved: a host ignores a threshold with one it does not know.
     report_series: one value `value` of the series `series` (e.g. "mean |gradient|") for tensor
     `tensor` (may be empty: a series of the rule itself, e.g. "loss change") at global step `step`.
     Only inside invoke_at_step and on_poll. The host keeps series bounded (downsampled, with the
     minimum and maximum of each bucket and every value at a step where the rule fired). NaN and
     infinities are kept as such. Ownership: copied at once. */
  void (*report_series)(litmus_ctx_t* ctx, litmus_str_t series, litmus_str_t tensor, int64_t step,
                        double value);
  /** The threshold a series is compared with: `value`, and `fires_when` (LITMUS_FIRES_*) says on
     which side the condition is met (the rule's own comparison decides equality). A series has
     at most one threshold per side (an upper and a lower bound); a repeated call for the same
     series and side replaces it. Inside create, invoke_at_step and on_poll. */
  void (*report_threshold)(litmus_ctx_t* ctx, litmus_str_t series, double value, int32_t fires_when);
  /** A short recommendation (one or two sentences: what to do when the rule fires), shown in the
     report's rules table. The same text twice is kept once. Inside create, invoke_at_step and
     on_poll. */
  void (*report_recommendation)(litmus_ctx_t* ctx, litmus_str_t text);
} litmus_host_api_t;

/* fires_when of report_threshold (since 1.3). */
#define LITMUS_FIRES_ABOVE 1    /**< the condition is met when the value is above the threshold */
#define LITMUS_FIRES_BELOW 2    /**< ... below it */

/* Flags of require_tensor_ex (since 1.2). */
#define LITMUS_REQUIRE_REGEX 1u           /**< `name` is a regex: every tensor it searches */
#define LITMUS_REQUIRE_REDUCTIONS_ONLY 2u /**< only reductions are read: no raw value needed */

/* ---- Plugin tables -------------------------------------------------------------------------- */

/** One parameter a rule accepts. type is advisory text for `litmus rules NAME`: "float", "int",
   "bool", "string", "list" (comma-separated), "mode". */
typedef struct litmus_param_spec {
  litmus_str_t name;          /**< the key users set */
  litmus_str_t type;          /**< advisory type text (see above) */
  litmus_str_t default_value; /**< used when the user gives none (ignored when required) */
  uint32_t required;          /**< the host refuses to create the rule without it */
  uint32_t reserved0;         /**< zero */
  litmus_str_t description;   /**< one line for `litmus rules NAME` */
} litmus_param_spec_t;

typedef struct litmus_rule_instance litmus_rule_instance_t; /**< opaque, the plugin's */

/** One rule of a plugin. All function pointers are called with the instance's ctx; see the
   general threading and ownership rules above. */
typedef struct litmus_rule_descriptor {
  uint32_t struct_size;       /**< every descriptor of a plugin has the same struct_size: it is the
                                 stride of litmus_plugin_api_t.rules */
  uint32_t param_spec_size;   /**< sizeof(litmus_param_spec_t) of the plugin: the stride of params
                                 (0 means the ABI 1.0 size, 72 bytes on LP64) */
  litmus_str_t name;          /**< the smdebug class name, e.g. "VanishingGradient" */
  litmus_str_t version;       /**< the rule's own version, e.g. "1.0.0" */
  litmus_str_t description;   /**< one line */
  const litmus_param_spec_t* params; /**< param_count entries, stride param_spec_size */
  size_t param_count;         /**< number of declared parameters */

  /** Required. Creates an instance from the parameters: every declared parameter is present (the
     host applied defaults and dropped unknown keys after warning about them). Returns
     LITMUS_INVALID_CONFIG with set_error for an invalid value ("threshold: expected a number,
     got 'abc'"). On success *instance is non-NULL and owned by the plugin until destroy. */
  litmus_status_t (*create)(litmus_ctx_t* ctx, const litmus_param_t* params, size_t param_count,
                            litmus_rule_instance_t** instance);
  /** Required. Destroys an instance created by create. Never fails. */
  void (*destroy)(litmus_rule_instance_t* instance);
  /** Optional (may be NULL). smdebug's set_required_tensors(step): declares, through
     host->require_tensor, what invoke_at_step(step) will read. Must be free of side effects on the
     instance's evaluation state: the host may call it for step N+1 while step N is evaluated
     (never concurrently with another call on the same instance). */
  litmus_status_t (*set_required_tensors)(litmus_rule_instance_t* instance, litmus_ctx_t* ctx, int64_t step);
  /** Required. smdebug's invoke_at_step(step) for a global step: LITMUS_OK (condition not met),
     LITMUS_CONDITION_MET, a skip status (tensor/step unavailable), LITMUS_NO_MORE_DATA to end the
     rule, or an error status with set_error. */
  litmus_status_t (*invoke_at_step)(litmus_rule_instance_t* instance, litmus_ctx_t* ctx, int64_t step);

  /** since 1.1 ----------------------------------------------------------------------------------
     Optional (may be NULL; a host reads it only when struct_size covers it). For rules that
     depend on time rather than on data (StalledTrainingRule): the host calls it after each poll of
     the trial that found no new step to evaluate, at its poll interval, including while it still
     waits for the base trial's first collections file. last_step: the last global step the host
     evaluated for this rule, or -1 if none yet. Never concurrently with the instance's other calls.
     Returns LITMUS_OK (nothing to say), LITMUS_CONDITION_MET (reported like a condition met by
     invoke_at_step at last_step, or at step 0 when last_step is -1; it ends the rule unless the
     job keeps going), LITMUS_NO_MORE_DATA to end the rule, or an error status with set_error.
     report_violations / report_detail may be called here as in invoke_at_step. */
  litmus_status_t (*on_poll)(litmus_rule_instance_t* instance, litmus_ctx_t* ctx, int64_t last_step);

  /** since 1.2 ----------------------------------------------------------------------------------
     Read by a host only when struct_size covers them (older descriptors: 0). LITMUS_RULE_* bits. */
  uint32_t flags;
  uint32_t reserved1; /**< 0 */
} litmus_rule_descriptor_t;

/* Flags of a rule descriptor (since 1.2). */
/** The verdict at a step depends only on the data of the steps it requires, never on earlier
    calls (VanishingGradient, ExplodingTensor, ...): a resumed job (docs/run.md, "Resume")
    continues such a rule where it was. A rule without it keeps state between steps
    (LossNotDecreasing): a resumed job replays its earlier steps, with their events suppressed,
    to rebuild that state. */
#define LITMUS_RULE_STATELESS 1u

/** The plugin table the entry hands out: the plugin's metadata and its rules. Static: valid
    forever (the host never dlcloses a plugin). */
typedef struct litmus_plugin_api {
  uint32_t struct_size;       /**< sizeof(litmus_plugin_api_t) of the plugin */
  uint32_t abi_major;         /**< LITMUS_ABI_MAJOR the plugin was built with */
  uint32_t abi_minor;         /**< LITMUS_ABI_MINOR the plugin was built with */
  uint32_t reserved0;         /**< zero */
  litmus_str_t plugin_name;   /**< e.g. "custom_gradient_rule" */
  litmus_str_t plugin_version; /**< the plugin's own version, e.g. "1.0.0" */
  const litmus_rule_descriptor_t* rules; /**< rule_count entries, stride rules[0].struct_size */
  size_t rule_count;          /**< at least 1 */
} litmus_plugin_api_t;

/** The type of litmus_plugin_entry_v1, for dlsym. */
typedef litmus_status_t (*litmus_plugin_entry_fn)(const litmus_host_api_t* host, litmus_ctx_t* ctx,
                                                   const litmus_plugin_api_t** out);
/** The one exported symbol. Called once, right after dlopen, on the host's main thread.
   host: the host table (borrowed, valid for the life of the process).
   ctx: for set_error during this call only.
   out: receives the plugin's static table (valid forever).
   Returns LITMUS_OK, or an error with set_error (e.g. the host's ABI is too old: the SDK's entry
   checks host->abi_major/abi_minor and returns LITMUS_INVALID_CONFIG with "plugin X needs ABI 1.N,
   litmus provides 1.M"). The host checks the returned table the same way (majors equal, host
   minor at least the plugin's) before using anything in it beyond abi_minor. C++ plugins get it
   from LITMUS_RULE_PLUGIN. */
LITMUS_PLUGIN_EXPORT litmus_status_t litmus_plugin_entry_v1(const litmus_host_api_t* host, litmus_ctx_t* ctx,
                                                            const litmus_plugin_api_t** out);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* LITMUS_RULE_ABI_H_ */
