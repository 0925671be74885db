// Everything is in the header (an inline function); a C target needs one source file.
#include "CPrefetch.h"
