// The test process ignores SIGPIPE from its first instruction, as a server process does: a write
// to a pipe or socket whose reader has gone must fail with EPIPE, not kill every test at once.
// Courier's loop thread blocks SIGPIPE itself, but the suite also runs the test server (SwiftNIO),
// child processes (swift-subprocess) and raw sockets; a CI run under ThreadSanitizer was once
// killed by a SIGPIPE from one of them. Swift Testing has no process-wide set-up hook, and a lazy
// global would only take effect once the first test that touches it ran, so this is a
// constructor, run by the loader before main.
#include <signal.h>
#include <stddef.h>
#include "CTestProcess.h"

__attribute__((constructor)) static void courier_test_process_setup(void) {
    signal(SIGPIPE, SIG_IGN);
}

int courier_test_process_ignores_sigpipe(void) {
    struct sigaction current;
    if (sigaction(SIGPIPE, NULL, &current) != 0) return 0;
    return current.sa_handler == SIG_IGN;
}
