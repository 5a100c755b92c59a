#ifndef C_TEST_PROCESS_H
#define C_TEST_PROCESS_H

/// Whether the test process ignores SIGPIPE (set before any test runs; see process.c).
int courier_test_process_ignores_sigpipe(void);

#endif
