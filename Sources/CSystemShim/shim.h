#ifndef PUSHWORKER_CSYSTEMSHIM_SHIM_H
#define PUSHWORKER_CSYSTEMSHIM_SHIM_H
// The few glibc pieces Swift's Glibc module does not export, in one place.

// The owner threads sleep in poll() and are woken through an eventfd.
#include <sys/eventfd.h>

// Owner threads are named for ps, top and debuggers; glibc declares this only under _GNU_SOURCE.
#include <pthread.h>
extern int pthread_setname_np(pthread_t thread, const char *name);
static inline int pw_set_thread_name(pthread_t thread, const char *name) { return pthread_setname_np(thread, name); }

// malloc tuning (mallopt, malloc_trim): at most two arenas, the heap trimmed once a burst is over.
#include <malloc.h>

static inline int pw_malloc_limit_arenas(int count) { return mallopt(M_ARENA_MAX, count); }
static inline int pw_malloc_trim(void) { return malloc_trim(0); }
static inline int pw_malloc_disable_fastbins(void) { return mallopt(M_MXFAST, 0); }

// Whether malloc is glibc's: release builds link jemalloc, which exports mallctl and returns freed
// memory itself; the tuning above is then for an allocator nobody uses.
#include <dlfcn.h>
static inline int pw_malloc_is_glibc(void) { return dlsym(RTLD_DEFAULT, "mallctl") == 0; }
#endif
