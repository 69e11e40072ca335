#ifndef PUSHWORKER_CSYSTEMSHIM_SHIM_H
#define PUSHWORKER_CSYSTEMSHIM_SHIM_H
// The few glibc pieces Swift's Glibc module does not export, in one place.

// The owner threads sleep in poll() and are woken through an eventfd.
#include <sys/eventfd.h>

// malloc tuning (mallopt, malloc_trim): at most two arenas, the heap trimmed once a burst is over.
#include <malloc.h>

static inline int pw_malloc_limit_arenas(int count) { return mallopt(M_ARENA_MAX, count); }
static inline int pw_malloc_trim(void) { return malloc_trim(0); }
static inline int pw_malloc_disable_fastbins(void) { return mallopt(M_MXFAST, 0); }
#endif
