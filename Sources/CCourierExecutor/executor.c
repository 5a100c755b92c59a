#include "CCourierExecutor.h"
#include <stdint.h>
#include <stddef.h>

// The runtime's declarations (swift/Runtime/Concurrency.h), with a job as an opaque pointer
// and SerialExecutorRef as its two words.
typedef __attribute__((swiftcall)) void (*enqueue_original)(void *job);
typedef __attribute__((swiftcall)) void (*enqueue_hook)(void *job, enqueue_original original);
extern enqueue_hook swift_task_enqueueGlobal_hook;
extern __attribute__((swiftcall)) void swift_job_run(void *job, void *identity, uintptr_t implementation);
extern __attribute__((swiftcall)) void swift_task_enqueueGlobal(void *job);

static __thread void *captured;
static __thread int capturing;
static enqueue_hook previous;

static __attribute__((swiftcall)) void hook(void *job, enqueue_original original) {
    if (capturing && captured == NULL) {
        captured = job;
        return;
    }
    if (previous) previous(job, original);
    else original(job);
}

void courier_install_enqueue_hook(void) {
    if (swift_task_enqueueGlobal_hook == hook) return;
    previous = swift_task_enqueueGlobal_hook;
    swift_task_enqueueGlobal_hook = hook;
}

void courier_capture_begin(void) { capturing = 1; }

void *courier_capture_end(void) {
    capturing = 0;
    void *job = captured;
    captured = NULL;
    return job;
}

void courier_run_global_job(void *job) { swift_job_run(job, NULL, 0); }

void courier_enqueue_global_job(void *job) { swift_task_enqueueGlobal(job); }
