#include <malloc.h>
#include "malloc_stats.h"

size_t courier_heap_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}
