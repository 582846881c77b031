#ifndef LATCHKEY_CLINUX_SHIM_H
#define LATCHKEY_CLINUX_SHIM_H

/* Linux calls Swift cannot make directly: prctl is variadic. Called only from
   Sources/Latchkey/Internals/POSIX.swift. */

#include <sys/prctl.h>

/* prctl(PR_SET_DUMPABLE, dumpable): 0 makes the process not dumpable (no core
   dump; other processes of the user cannot ptrace it or read its memory);
   1 restores the default. Returns 0, or -1 with errno set. */
static inline int latchkey_set_dumpable(int dumpable) {
    return prctl(PR_SET_DUMPABLE, (unsigned long)dumpable, 0UL, 0UL, 0UL);
}

/* prctl(PR_GET_DUMPABLE): 1 when dumpable, 0 when not (2 for root-only dumps),
   -1 with errno set. */
static inline int latchkey_get_dumpable(void) {
    return prctl(PR_GET_DUMPABLE, 0UL, 0UL, 0UL, 0UL);
}

#endif
