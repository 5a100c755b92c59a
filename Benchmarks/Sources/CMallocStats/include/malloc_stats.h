#ifndef COURIER_MALLOC_STATS_H
#define COURIER_MALLOC_STATS_H
#include <stddef.h>

/// Bytes malloc has handed out and not had back, over all of glibc's arenas (mallinfo2's
/// uordblks plus hblkhd). Swift's Glibc module does not export <malloc.h>.
size_t courier_heap_in_use(void);

#endif
