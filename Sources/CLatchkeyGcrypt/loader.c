/*
 * Loads libgcrypt on first use and calls it through the pointers dlsym found
 * (see include/CLatchkeyGcrypt.h). gcrypt.h is included for its prototypes and
 * constants only: each wrapper calls a pointer of the real function's type, and
 * each constant of the header is asserted equal to gcrypt.h's.
 */
#include "CLatchkeyGcrypt.h"

#include <dlfcn.h>
#include <gcrypt.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

_Static_assert((int)LK_GCRY_MD_SHA256 == (int)GCRY_MD_SHA256, "GCRY_MD_SHA256");
_Static_assert((int)LK_GCRY_MD_FLAG_HMAC == (int)GCRY_MD_FLAG_HMAC, "GCRY_MD_FLAG_HMAC");
_Static_assert((int)LK_GCRY_CIPHER_AES == (int)GCRY_CIPHER_AES, "GCRY_CIPHER_AES");
_Static_assert((int)LK_GCRY_CIPHER_MODE_CBC == (int)GCRY_CIPHER_MODE_CBC, "GCRY_CIPHER_MODE_CBC");
_Static_assert((int)LK_GCRYMPI_FMT_HEX == (int)GCRYMPI_FMT_HEX, "GCRYMPI_FMT_HEX");
_Static_assert((int)LK_GCRYMPI_FMT_USG == (int)GCRYMPI_FMT_USG, "GCRYMPI_FMT_USG");
_Static_assert((int)LK_GCRY_STRONG_RANDOM == (int)GCRY_STRONG_RANDOM, "GCRY_STRONG_RANDOM");
_Static_assert(sizeof(unsigned int) == sizeof(gcry_error_t), "gcry_error_t");

/** The library opened: the soname of libgcrypt 1.x, which libsecret links too. */
static const char lk_library[] = "libgcrypt.so.20";

/** Every function the wrappers call, and the two the initialisation calls, as an X-macro. */
#define LK_EACH_FUNCTION(X) \
    X(gcry_check_version) \
    X(gcry_control) \
    X(gcry_mpi_randomize) \
    X(gcry_mpi_set_bit) \
    X(gcry_mpi_set_ui) \
    X(gcry_mpi_powm) \
    X(gcry_mpi_sub_ui) \
    X(gcry_mpi_cmp_ui) \
    X(gcry_mpi_cmp) \
    X(gcry_mpi_new) \
    X(gcry_mpi_scan) \
    X(gcry_mpi_release) \
    X(gcry_mpi_print) \
    X(gcry_md_open) \
    X(gcry_md_close) \
    X(gcry_md_setkey) \
    X(gcry_md_write) \
    X(gcry_md_read) \
    X(gcry_create_nonce) \
    X(gcry_cipher_open) \
    X(gcry_cipher_close) \
    X(gcry_cipher_setkey) \
    X(gcry_cipher_setiv) \
    X(gcry_cipher_encrypt) \
    X(gcry_cipher_decrypt) \
    X(gcry_strerror)

/** One pointer per function, of the real function's type, filled once by lk_load. */
struct lk_functions {
#define LK_FIELD(name) __typeof__(&name) name;
    LK_EACH_FUNCTION(LK_FIELD)
#undef LK_FIELD
};

/** The resolved functions; written only inside pthread_once, read after it. */
static struct lk_functions lk_table;
/** 0 once every function is resolved and the library initialised; before, and after a failure, why not. */
static int lk_status = LK_GCRYPT_LOAD_NOT_FOUND;
/** Why loading failed, when it did. */
static char lk_failure[512];
/** Runs lk_load once per process. */
static pthread_once_t lk_once = PTHREAD_ONCE_INIT;

/**
 * Opens the library, resolves every function into a local table, copied into lk_table only
 * when all were found, and initialises the library. The handle is never closed: libsecret,
 * loaded later in the same process, uses the same library.
 */
static void lk_load(void) {
    void *handle = dlopen(lk_library, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *reason = dlerror();
        snprintf(lk_failure, sizeof lk_failure, "%s", reason != NULL ? reason : "dlopen failed");
        lk_status = LK_GCRYPT_LOAD_NOT_FOUND;
        return;
    }
    struct lk_functions found;
    memset(&found, 0, sizeof found);
#define LK_RESOLVE(name)                                                                          \
    {                                                                                             \
        void *symbol = dlsym(handle, #name);                                                      \
        if (symbol == NULL) {                                                                     \
            snprintf(lk_failure, sizeof lk_failure, "%s does not provide %s", lk_library, #name); \
            lk_status = LK_GCRYPT_LOAD_INCOMPLETE;                                                \
            return;                                                                               \
        }                                                                                         \
        memcpy(&found.name, &symbol, sizeof symbol);                                              \
    }
    LK_EACH_FUNCTION(LK_RESOLVE)
#undef LK_RESOLVE
    /* As the manual asks of a library's user, unless the process (libsecret) did it already. */
    if (!found.gcry_control(GCRYCTL_INITIALIZATION_FINISHED_P)) {
        if (found.gcry_check_version(GCRYPT_VERSION) == NULL) {
            snprintf(lk_failure, sizeof lk_failure, "%s is older than %s, which Latchkey was built against", lk_library,
                     GCRYPT_VERSION);
            lk_status = LK_GCRYPT_LOAD_TOO_OLD;
            return;
        }
        found.gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
    }
    lk_table = found;
    lk_status = 0;
}

int latchkey_gcrypt_load(char *message, size_t size) {
    pthread_once(&lk_once, lk_load);
    if (lk_status != 0 && message != NULL && size > 0) {
        snprintf(message, size, "%s", lk_failure);
    }
    return lk_status;
}

/* The wrappers, in the order of CLatchkeyGcrypt.h. */

void lk_gcry_mpi_randomize(struct gcry_mpi *w, unsigned int nbits, int level) {
    lk_table.gcry_mpi_randomize(w, nbits, (enum gcry_random_level)level);
}

void lk_gcry_mpi_set_bit(struct gcry_mpi *a, unsigned int n) {
    lk_table.gcry_mpi_set_bit(a, n);
}

struct gcry_mpi *lk_gcry_mpi_set_ui(struct gcry_mpi *w, unsigned long u) {
    return lk_table.gcry_mpi_set_ui(w, u);
}

void lk_gcry_mpi_powm(struct gcry_mpi *w, struct gcry_mpi *b, struct gcry_mpi *e, struct gcry_mpi *m) {
    lk_table.gcry_mpi_powm(w, b, e, m);
}

void lk_gcry_mpi_sub_ui(struct gcry_mpi *w, struct gcry_mpi *u, unsigned long v) {
    lk_table.gcry_mpi_sub_ui(w, u, v);
}

int lk_gcry_mpi_cmp_ui(struct gcry_mpi *u, unsigned long v) {
    return lk_table.gcry_mpi_cmp_ui(u, v);
}

int lk_gcry_mpi_cmp(struct gcry_mpi *u, struct gcry_mpi *v) {
    return lk_table.gcry_mpi_cmp(u, v);
}

struct gcry_mpi *lk_gcry_mpi_new(unsigned int nbits) {
    return lk_table.gcry_mpi_new(nbits);
}

unsigned int lk_gcry_mpi_scan(struct gcry_mpi **ret_mpi, int format, const void *buffer, size_t buflen, size_t *nscanned) {
    return lk_table.gcry_mpi_scan(ret_mpi, (enum gcry_mpi_format)format, buffer, buflen, nscanned);
}

void lk_gcry_mpi_release(struct gcry_mpi *a) {
    lk_table.gcry_mpi_release(a);
}

unsigned int lk_gcry_mpi_print(int format, unsigned char *buffer, size_t buflen, size_t *nwritten, struct gcry_mpi *a) {
    return lk_table.gcry_mpi_print((enum gcry_mpi_format)format, buffer, buflen, nwritten, a);
}

unsigned int lk_gcry_md_open(struct gcry_md_handle **handle, int algo, unsigned int flags) {
    return lk_table.gcry_md_open(handle, algo, flags);
}

void lk_gcry_md_close(struct gcry_md_handle *handle) {
    lk_table.gcry_md_close(handle);
}

unsigned int lk_gcry_md_setkey(struct gcry_md_handle *handle, const void *key, size_t keylen) {
    return lk_table.gcry_md_setkey(handle, key, keylen);
}

void lk_gcry_md_write(struct gcry_md_handle *handle, const void *buffer, size_t length) {
    lk_table.gcry_md_write(handle, buffer, length);
}

unsigned char *lk_gcry_md_read(struct gcry_md_handle *handle, int algo) {
    return lk_table.gcry_md_read(handle, algo);
}

void lk_gcry_create_nonce(void *buffer, size_t length) {
    lk_table.gcry_create_nonce(buffer, length);
}

unsigned int lk_gcry_cipher_open(struct gcry_cipher_handle **handle, int algo, int mode, unsigned int flags) {
    return lk_table.gcry_cipher_open(handle, algo, mode, flags);
}

void lk_gcry_cipher_close(struct gcry_cipher_handle *handle) {
    lk_table.gcry_cipher_close(handle);
}

unsigned int lk_gcry_cipher_setkey(struct gcry_cipher_handle *handle, const void *key, size_t keylen) {
    return lk_table.gcry_cipher_setkey(handle, key, keylen);
}

unsigned int lk_gcry_cipher_setiv(struct gcry_cipher_handle *handle, const void *iv, size_t ivlen) {
    return lk_table.gcry_cipher_setiv(handle, iv, ivlen);
}

unsigned int lk_gcry_cipher_encrypt(struct gcry_cipher_handle *handle, void *out, size_t outsize, const void *in, size_t inlen) {
    return lk_table.gcry_cipher_encrypt(handle, out, outsize, in, inlen);
}

unsigned int lk_gcry_cipher_decrypt(struct gcry_cipher_handle *handle, void *out, size_t outsize, const void *in, size_t inlen) {
    return lk_table.gcry_cipher_decrypt(handle, out, outsize, in, inlen);
}

const char *lk_gcry_strerror(unsigned int error) {
    return lk_table.gcry_strerror(error);
}
