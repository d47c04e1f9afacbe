/* C API of the decode mega-kernel (docs/MEGAKERNEL.md, "Running a model"):
 * plans one decode step of a Qwen3 / Llama config for a batch size, binds
 * buffers (weights, activations, KV cache, inputs, outputs) by name, and
 * runs steps as one persistent kernel. The Python front end
 * (python/tawa/mega) loads it with ctypes.
 *
 * Functions returning int return 0 on success and nonzero on failure, with
 * the message in tawa_mega_last_error(). Not thread-safe per decoder. */
#ifndef TAWA_MEGA_H
#define TAWA_MEGA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tawa_mega_decoder tawa_mega_decoder;

/* The message of the calling thread's last failure. */
const char *tawa_mega_last_error(void);

/* tawa_mega_create flags. */
#define TAWA_MEGA_TRACE 1 /* record each task's start and end (timeline) */
/* Merge a split attention's chunks in a task of their own after attention
 * (default: the last chunk of each row and KV head to end merges them). */
#define TAWA_MEGA_SEPARATE_MERGE 2

/* Plans, binds and lowers one decode step of `config_json` (the text of a
 * Hugging Face config.json) for `batch` rows and a KV cache of `max_seq`
 * positions per row, on the current CUDA device, with `scheduler_ctas`
 * CTAs of scheduler warps (the rest of the SMs are workers).
 *
 * The KV cache is paged: each layer's k and v caches are pools of `kv_pages`
 * pages (0: batch * ceil(max_seq / page_size), every row at max_seq) of
 * `page_size` positions, bf16 [kv_pages, kv_heads, page_size, head_dim], and
 * the input buffer `block_table` (int32 [batch, ceil(max_seq / page_size)])
 * maps row b's positions [i page_size, (i + 1) page_size) to pool page
 * block_table[b][i]. The host keeps the table valid for every position a
 * step reads or writes (0 .. positions[b]) and gives rows distinct pages;
 * the kernel does not check it. page_size = max_seq with the table b -> b
 * is a contiguous cache. */
int tawa_mega_create(const char *config_json, int batch, int max_seq,
                     int page_size, int kv_pages, int scheduler_ctas, int flags,
                     tawa_mega_decoder **out);
void tawa_mega_destroy(tawa_mega_decoder *d);

/* Buffers, in the order of the binding. type: 0 bf16, 1 f32, 2 i32;
 * kind: 0 weight, 1 input, 2 activation, 3 state, 4 output, 5 staged weight
 * (a linear's weight in the layout it streams: bind it to the output of
 * tawa_mega_pack_weight for weight tawa_mega_buffer_source), 6 scratch
 * (counters the runtime keeps in its own zeroed state: bound already, and
 * tawa_mega_bind refuses them), 7 constant (a table the runtime computes
 * from the config at creation and owns, today the RoPE cosines and sines
 * `rope`: bound already, refused by tawa_mega_bind), 8 polled (a bf16
 * activation, which the runtime places in an allocation of its own and, in
 * batch-1 plans without just-in-time tasks, poisons before every step so
 * that its readers poll it: bound already, refused by tawa_mega_bind). `shape` has
 * room for 8 dimensions. */
int tawa_mega_num_buffers(const tawa_mega_decoder *d);
const char *tawa_mega_buffer_name(const tawa_mega_decoder *d, int index);
int tawa_mega_buffer_info(const tawa_mega_decoder *d, int index, int *type,
                          int *kind, int *ndim, int64_t *shape);
/* A staged weight's source weight and the weight its columns are scaled by
 * (their Hugging Face keys; the scale is the RMSNorm the linear folds in):
 * NULL where the buffer is not a staged weight or has no scale. */
const char *tawa_mega_buffer_source(const tawa_mega_decoder *d, int index);
const char *tawa_mega_buffer_scale(const tawa_mega_decoder *d, int index);

/* Packs the bf16 weight `src` ([n, k], row-major) into `dst` ([n rounded up
 * to 16, k rounded up to 32]) in the staged layout, each column c multiplied by
 * scale[c] (bf16 [k]; NULL: none) and rounded to bf16, on `stream`
 * (asynchronous). The layout depends on n and k alone, so one packed copy
 * serves every batch size's step. */
int tawa_mega_pack_weight(const void *src, const void *scale, void *dst,
                          int64_t n, int32_t k, void *stream);

/* Binds buffer `index` to device memory at `ptr` (16-byte aligned, holding
 * the buffer's elements contiguously). */
int tawa_mega_bind(tawa_mega_decoder *d, int index, void *ptr);

/* Runs one step on `stream` (a cudaStream_t; NULL for the default stream):
 * clears the runtime's counters and launches the persistent kernel; every
 * buffer must be bound. Asynchronous. `watchdog_ms` bounds every wait
 * inside the kernel (0: 2000 ms); a stuck step ends with reports
 * (tawa_mega_check). */
int tawa_mega_step(tawa_mega_decoder *d, void *stream, double watchdog_ms);

/* After a step has finished (the stream synchronized): nonzero, with the
 * watchdog's reports as the message, if a wait timed out or an event
 * received more arrivals than its count. */
int tawa_mega_check(tawa_mega_decoder *d);

/* A one-line summary of the plan: tasks, events, workers, JIT tasks. */
const char *tawa_mega_summary(const tawa_mega_decoder *d);

/* In-kernel time of the last step (first CTA start to last CTA exit, ns),
 * after the stream synchronized. */
uint64_t tawa_mega_last_step_ns(tawa_mega_decoder *d);

/* Tasks of the plan; per task its operator (-1 for an empty task). */
int tawa_mega_num_tasks(const tawa_mega_decoder *d);
int tawa_mega_task_ops(const tawa_mega_decoder *d, int32_t *ops);
int tawa_mega_num_ops(const tawa_mega_decoder *d);
const char *tawa_mega_op_name(const tawa_mega_decoder *d, int op);

/* With TAWA_MEGA_TRACE, after the step finished: per task (by id)
 * TAWA_MEGA_TRACE_VALUES values: its start and end (globaltimer ns), its
 * worker, when its inputs were in and when it had computed its results (ns;
 * 0 where the task does not stamp them), and the ns its warp 0 waited for
 * weights (the last three only in builds with -DTAWA_MEGA_TRACE_PHASES=1,
 * else 0). `records` holds TAWA_MEGA_TRACE_VALUES * num_tasks values. */
#define TAWA_MEGA_TRACE_VALUES 6
int tawa_mega_trace(tawa_mega_decoder *d, uint64_t *records);

/* After a step finished: the %smid each CTA of the persistent kernel ran on
 * in that step, by CTA (a trace's worker is its CTA): `sms` holds `n`
 * values, n at least tawa_mega_num_ctas. */
int tawa_mega_num_ctas(const tawa_mega_decoder *d);
int tawa_mega_worker_sms(tawa_mega_decoder *d, uint32_t *sms, int n);

#ifdef __cplusplus
}
#endif

#endif /* TAWA_MEGA_H */
