// glibc's malloc tuning (mallopt, malloc_trim), which the Glibc Swift module does not export.
#include <malloc.h>

static inline int pw_malloc_limit_arenas(int count) { return mallopt(M_ARENA_MAX, count); }
static inline int pw_malloc_trim(void) { return malloc_trim(0); }
static inline int pw_malloc_disable_fastbins(void) { return mallopt(M_MXFAST, 0); }
