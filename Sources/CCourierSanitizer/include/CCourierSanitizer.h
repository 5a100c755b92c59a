#ifndef COURIER_SANITIZER_H
#define COURIER_SANITIZER_H

// Happens-before edges that ThreadSanitizer cannot see by itself, told to it explicitly.
//
// The Swift concurrency runtime is not built with ThreadSanitizer. When the event loop resumes
// a continuation before the waiting task has suspended (the loop took the caller's transfer from
// its inbox and finished it first), the runtime orders the two sides with an atomic exchange on
// the continuation, which the sanitizer never sees. The loop releases the transfer before it
// resumes, and the caller acquires it once its await returns.
//
// The declarations are weak: in a build without ThreadSanitizer there is no such function, each
// call is one test of a null address, and nothing happens.

void __tsan_acquire(void *address) __attribute__((weak));
void __tsan_release(void *address) __attribute__((weak));

static inline void courier_tsan_release(void *address) {
    if (__tsan_release) __tsan_release(address);
}

static inline void courier_tsan_acquire(void *address) {
    if (__tsan_acquire) __tsan_acquire(address);
}

#endif
