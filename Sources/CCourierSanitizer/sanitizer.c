// The annotations are inline functions in include/CCourierSanitizer.h; SwiftPM needs a source file.
#include "CCourierSanitizer.h"
