#ifndef PUSHWORKER_CHIREDIS_SHIM_H
#define PUSHWORKER_CHIREDIS_SHIM_H
#include <hiredis/hiredis.h>
#endif
