#ifndef PUSHWORKER_CNGHTTP2_SHIM_H
#define PUSHWORKER_CNGHTTP2_SHIM_H
#include <nghttp2/nghttp2.h>
#endif
