#ifndef COURIER_CZLIB_SHIM_H
#define COURIER_CZLIB_SHIM_H
// zlib, for the compressed HdrHistogram encoding in load-test results.
#include <zlib.h>
#endif
