#ifndef LATCHKEY_CGCRYPT_H
#define LATCHKEY_CGCRYPT_H

/*
 * libgcrypt as the Secret Service provider calls it, loaded on first use.
 *
 * Nothing here includes gcrypt.h, and nothing links libgcrypt: `latchkey_gcrypt_load`
 * opens libgcrypt.so.20 with dlopen (once per process, thread-safe), resolves every
 * function below with dlsym and initialises the library, so a process that never serves
 * or unlocks the Secret Service provider does not map or relocate it. Each `lk_<name>`
 * calls `<name>` through the resolved pointer; calling one before `latchkey_gcrypt_load`
 * has returned 0 is a programmer error.
 *
 * The types are opaque; the constants are the enum values the provider passes. loader.c
 * includes gcrypt.h: the compiler checks each wrapper's call against the real function's
 * prototype and each constant with a static assertion. Only
 * Sources/LatchkeyProvider/Internals/Gcrypt.swift imports this module.
 */

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** gcry_mpi_t: a multi-precision integer. */
struct gcry_mpi;
/** gcry_md_hd_t: a message digest (here HMAC) context. */
struct gcry_md_handle;
/** gcry_cipher_hd_t: a cipher context. */
struct gcry_cipher_handle;

/* The libgcrypt constants the provider passes (gcrypt.h's enum values). */
#define LK_GCRY_MD_SHA256 8
#define LK_GCRY_MD_FLAG_HMAC 2u
#define LK_GCRY_CIPHER_AES 7
#define LK_GCRY_CIPHER_MODE_CBC 3
#define LK_GCRYMPI_FMT_HEX 4
#define LK_GCRYMPI_FMT_USG 5
#define LK_GCRY_STRONG_RANDOM 1

/* `latchkey_gcrypt_load`'s results other than 0: dlopen could not open libgcrypt.so.20; the
 * library lacks a function Latchkey calls; it is older than the headers Latchkey was built
 * against (gcry_check_version). */
#define LK_GCRYPT_LOAD_NOT_FOUND 1
#define LK_GCRYPT_LOAD_INCOMPLETE 2
#define LK_GCRYPT_LOAD_TOO_OLD 3

/**
 * Opens libgcrypt and resolves every function on first call (later calls return the first
 * result), then initialises it as its manual asks of a library's user (gcry_check_version,
 * then GCRYCTL_INITIALIZATION_FINISHED) unless the process did that already (libsecret, in
 * the same process, initialises the same library).
 * @param message Receives why loading failed, when it did; may be NULL.
 * @param size The size of `message`.
 * @return 0, or one of the LK_GCRYPT_LOAD_* values.
 */
int latchkey_gcrypt_load(char *message, size_t size);

void lk_gcry_mpi_randomize(struct gcry_mpi *w, unsigned int nbits, int level);
void lk_gcry_mpi_set_bit(struct gcry_mpi *a, unsigned int n);
struct gcry_mpi *lk_gcry_mpi_set_ui(struct gcry_mpi *w, unsigned long u);
void lk_gcry_mpi_powm(struct gcry_mpi *w, struct gcry_mpi *b, struct gcry_mpi *e, struct gcry_mpi *m);
void lk_gcry_mpi_sub_ui(struct gcry_mpi *w, struct gcry_mpi *u, unsigned long v);
int lk_gcry_mpi_cmp_ui(struct gcry_mpi *u, unsigned long v);
int lk_gcry_mpi_cmp(struct gcry_mpi *u, struct gcry_mpi *v);
struct gcry_mpi *lk_gcry_mpi_new(unsigned int nbits);
unsigned int lk_gcry_mpi_scan(struct gcry_mpi **ret_mpi, int format, const void *buffer, size_t buflen, size_t *nscanned);
void lk_gcry_mpi_release(struct gcry_mpi *a);
unsigned int lk_gcry_mpi_print(int format, unsigned char *buffer, size_t buflen, size_t *nwritten, struct gcry_mpi *a);
unsigned int lk_gcry_md_open(struct gcry_md_handle **handle, int algo, unsigned int flags);
void lk_gcry_md_close(struct gcry_md_handle *handle);
unsigned int lk_gcry_md_setkey(struct gcry_md_handle *handle, const void *key, size_t keylen);
void lk_gcry_md_write(struct gcry_md_handle *handle, const void *buffer, size_t length);
unsigned char *lk_gcry_md_read(struct gcry_md_handle *handle, int algo);
void lk_gcry_create_nonce(void *buffer, size_t length);
unsigned int lk_gcry_cipher_open(struct gcry_cipher_handle **handle, int algo, int mode, unsigned int flags);
void lk_gcry_cipher_close(struct gcry_cipher_handle *handle);
unsigned int lk_gcry_cipher_setkey(struct gcry_cipher_handle *handle, const void *key, size_t keylen);
unsigned int lk_gcry_cipher_setiv(struct gcry_cipher_handle *handle, const void *iv, size_t ivlen);
unsigned int lk_gcry_cipher_encrypt(struct gcry_cipher_handle *handle, void *out, size_t outsize, const void *in, size_t inlen);
unsigned int lk_gcry_cipher_decrypt(struct gcry_cipher_handle *handle, void *out, size_t outsize, const void *in, size_t inlen);
const char *lk_gcry_strerror(unsigned int error);

#ifdef __cplusplus
}
#endif

#endif
