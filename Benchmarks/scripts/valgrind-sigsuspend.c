// Preloaded into Courier's binaries under valgrind (Benchmarks/scripts/instructions.py).
//
// Why valgrind 3.19 crashes on every Swift program with an async main (Courier's CLI and
// benchmarks, and a five-line `@main` program alike), found with --trace-syscalls: the main
// thread ends in dispatch_main(), which parks it in libdispatch's _dispatch_sigsuspend with a
// `static const sigset_t`, in read-only memory. Valgrind's rt_sigsuspend wrapper edits the
// caller's mask in place (it takes its own reserved signal out of it), so it writes to a
// read-only page and dies of its own SIGSEGV ("the 'impossible' happened"). The kernel never
// writes to that mask; valgrind does.
//
// This definition interposes on glibc's sigsuspend (libdispatch calls it through the PLT) and
// hands the kernel a writable copy of the mask: the same system call, the same semantics.
#define _GNU_SOURCE
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

int sigsuspend(const sigset_t *mask) {
    sigset_t writable = *mask;
    return (int)syscall(SYS_rt_sigsuspend, &writable, _NSIG / 8);
}
