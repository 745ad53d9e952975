/*
 * tl_hash.h - SHA-256 through OpenSSL EVP (uses the CPU's SHA extensions when OpenSSL
 * finds them). Files are streamed with 1 MiB reads; many files are hashed in parallel.
 */
#ifndef TL_HASH_H
#define TL_HASH_H
#include <stddef.h>
#include <stdint.h>

#define TL_SHA256_HEX 65 /* 64 hex digits + NUL */
#define TL_READ_CHUNK (1u << 20)

typedef struct tl_sha256 {
    void *ctx; /* EVP_MD_CTX */
} tl_sha256;

int tl_sha256_init(tl_sha256 *h);                          /* 0 ok */
void tl_sha256_update(tl_sha256 *h, const void *p, size_t n);
void tl_sha256_final(tl_sha256 *h, char hex[TL_SHA256_HEX]); /* also frees */
void tl_sha256_abort(tl_sha256 *h);

void tl_sha256_buf(const void *p, size_t n, char hex[TL_SHA256_HEX]);

/* Hash one regular file (links followed; a FIFO or device is refused at once). Returns 0,
 * or a code for tl_strerror() (tl_safe.h). */
int tl_sha256_file(const char *path, char hex[TL_SHA256_HEX], uint64_t *bytes);

typedef struct tl_hash_result {
    char hex[TL_SHA256_HEX];
    uint64_t bytes;
    int err; /* errno value, 0 ok */
} tl_hash_result;

/* Hash n files, in parallel with up to nthreads threads (0: one per CPU, at most 8).
 * Small jobs run on the calling thread. Per-file errors go to out[i].err. */
void tl_hash_files(const char *const *paths, size_t n, tl_hash_result *out, int nthreads);
/* The same with tl_open_regular flags (TL_OPEN_NOFOLLOW: a symbolic link is refused). */
void tl_hash_files_flags(const char *const *paths, size_t n, tl_hash_result *out, int nthreads, int flags);

/* Is s exactly 64 lowercase hex digits? */
int tl_is_sha256_hex(const char *s);

#endif
