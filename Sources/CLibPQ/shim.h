#ifndef PUSHQ_CLIBPQ_SHIM_H
#define PUSHQ_CLIBPQ_SHIM_H
#include <libpq-fe.h>
#endif
