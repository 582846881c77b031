#ifndef LATCHKEY_GCRYPT_SHIM_H
#define LATCHKEY_GCRYPT_SHIM_H

#include <gcrypt.h>

/**
 * Initialises libgcrypt once, as its manual asks of a library's user: gcry_check_version,
 * then GCRYCTL_INITIALIZATION_FINISHED (gcry_control is variadic, which Swift cannot call),
 * unless the process did that already (libsecret, in the same process, initialises it too).
 * @return 0, or -1 when the installed libgcrypt is older than the headers built against.
 */
static inline int latchkey_gcrypt_initialize(void) {
    if (gcry_control(GCRYCTL_INITIALIZATION_FINISHED_P)) {
        return 0;
    }
    if (gcry_check_version(GCRYPT_VERSION) == NULL) {
        return -1;
    }
    gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
    return 0;
}

#endif
