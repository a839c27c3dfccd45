/*
 * server_core.h -- heapd.h as C++ sees it. format.h pins its layout with
 * C11 _Static_assert, which C++ spells static_assert; this header maps
 * the one to the other so the adapter can include the C core's header.
 */
#ifndef HEAPD_SERVER_CORE_H
#define HEAPD_SERVER_CORE_H

#if defined(__cplusplus) && !defined(_Static_assert)
#define _Static_assert static_assert
#define HEAPD_SERVER_CORE_SA
#endif

#include "heapd.h"

#ifdef HEAPD_SERVER_CORE_SA
#undef _Static_assert
#undef HEAPD_SERVER_CORE_SA
#endif

#endif /* HEAPD_SERVER_CORE_H */
