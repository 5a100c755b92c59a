#ifndef CCOURIER_EXECUTOR_H
#define CCOURIER_EXECUTOR_H

/// Resuming a caller on the loop thread (Docs/Performance.md, "P8").
///
/// The concurrency runtime offers a hook on every enqueue to the global executor. While the
/// loop resumes a transfer's continuation it arms a per-thread slot; the job of a task without
/// an executor preference that the resumption enqueues to the global pool is kept there
/// instead, so the loop can run it in place (one thread, no pool wake) when nothing else waits.

/// Installs the hook once per process; an earlier hook still sees every job not kept.
void courier_install_enqueue_hook(void);
/// Arms this thread's slot: the next global enqueue made on this thread is kept, not enqueued.
void courier_capture_begin(void);
/// Disarms the slot and returns the job kept since `courier_capture_begin`, if any.
void *_Nullable courier_capture_end(void);
/// Runs a kept job on this thread, as the global executor would.
void courier_run_global_job(void *_Nonnull job);
/// Enqueues a kept job to the global executor after all.
void courier_enqueue_global_job(void *_Nonnull job);

#endif
