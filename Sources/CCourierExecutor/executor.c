#include "CCourierExecutor.h"
#include <stdatomic.h>
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
// Read by any thread that enqueues a job, written once by the thread that installs the hook: an
// atomic, stored before the hook is published (ThreadSanitizer reported the plain variable).
static _Atomic(enqueue_hook) previous;

static __attribute__((swiftcall)) void hook(void *job, enqueue_original original) {
    if (capturing && captured == NULL) {
        captured = job;
        return;
    }
    enqueue_hook chained = atomic_load_explicit(&previous, memory_order_acquire);
    if (chained) chained(job, original);
    else original(job);
}

void courier_install_enqueue_hook(void) {
    enqueue_hook current = __atomic_load_n(&swift_task_enqueueGlobal_hook, __ATOMIC_ACQUIRE);
    if (current == hook) return;
    atomic_store_explicit(&previous, current, memory_order_release);
    // `previous` first, then the hook. The runtime reads the hook with a plain load, so a thread
    // that sees the hook is not formally ordered after `previous`; what it could read instead is
    // the initial NULL, which is also the value unless another library installed a hook first.
    __atomic_store_n(&swift_task_enqueueGlobal_hook, hook, __ATOMIC_RELEASE);
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
