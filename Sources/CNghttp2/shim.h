#ifndef PUSHWORKER_CNGHTTP2_SHIM_H
#define PUSHWORKER_CNGHTTP2_SHIM_H
#include <nghttp2/nghttp2.h>
// The loop that drives nghttp2 sessions sleeps in poll() and is woken through an eventfd,
// which Swift's Glibc module does not export.
#include <sys/eventfd.h>
#endif
