#include "tl_hash.h"
#include "tl_safe.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static EVP_MD *g_md;
static pthread_once_t g_md_once = PTHREAD_ONCE_INIT;

static void md_fetch(void)
{
    /* Explicit fetch once: avoids the implicit per-init fetch of EVP_sha256(). */
    g_md = EVP_MD_fetch(NULL, "SHA256", NULL);
}

static const EVP_MD *md(void)
{
    pthread_once(&g_md_once, md_fetch);
    return g_md ? g_md : EVP_sha256();
}

int tl_sha256_init(tl_sha256 *h)
{
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    if (!c)
        return -1;
    if (EVP_DigestInit_ex(c, md(), NULL) != 1) {
        EVP_MD_CTX_free(c);
        return -1;
    }
    h->ctx = c;
    return 0;
}

void tl_sha256_update(tl_sha256 *h, const void *p, size_t n)
{
    if (n)
        EVP_DigestUpdate((EVP_MD_CTX *)h->ctx, p, n);
}

static void to_hex(const unsigned char *d, unsigned n, char *hex)
{
    static const char digits[] = "0123456789abcdef";
    for (unsigned i = 0; i < n; i++) {
        hex[2 * i] = digits[d[i] >> 4];
        hex[2 * i + 1] = digits[d[i] & 15];
    }
    hex[2 * n] = '\0';
}

void tl_sha256_final(tl_sha256 *h, char hex[TL_SHA256_HEX])
{
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    EVP_DigestFinal_ex((EVP_MD_CTX *)h->ctx, d, &n);
    EVP_MD_CTX_free((EVP_MD_CTX *)h->ctx);
    h->ctx = NULL;
    to_hex(d, n, hex);
}

void tl_sha256_abort(tl_sha256 *h)
{
    EVP_MD_CTX_free((EVP_MD_CTX *)h->ctx);
    h->ctx = NULL;
}

void tl_sha256_buf(const void *p, size_t n, char hex[TL_SHA256_HEX])
{
    tl_sha256 h;
    if (tl_sha256_init(&h) != 0) {
        hex[0] = '\0';
        return;
    }
    tl_sha256_update(&h, p, n);
    tl_sha256_final(&h, hex);
}

static int hash_fd(int fd, unsigned char *buf, char hex[TL_SHA256_HEX], uint64_t *bytes)
{
    tl_sha256 h;
    if (tl_sha256_init(&h) != 0)
        return ENOMEM;
    uint64_t total = 0;
    for (;;) {
        ssize_t r = tl_stop_signal ? (errno = EINTR, -1) : read(fd, buf, TL_READ_CHUNK);
        if (r < 0) {
            if (errno == EINTR && !tl_stop_signal)
                continue;
            int e = errno;
            tl_sha256_abort(&h);
            return e;
        }
        if (r == 0)
            break;
        tl_sha256_update(&h, buf, (size_t)r);
        total += (uint64_t)r;
    }
    tl_sha256_final(&h, hex);
    if (bytes)
        *bytes = total;
    return 0;
}

static int hash_path(const char *path, int flags, unsigned char *buf, char hex[TL_SHA256_HEX], uint64_t *bytes)
{
    int fd = tl_open_regular(path, flags, NULL);
    if (fd < 0)
        return -fd;
#ifdef POSIX_FADV_SEQUENTIAL
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
    int e = hash_fd(fd, buf, hex, bytes);
    close(fd);
    return e;
}

int tl_sha256_file(const char *path, char hex[TL_SHA256_HEX], uint64_t *bytes)
{
    unsigned char *buf = malloc(TL_READ_CHUNK);
    if (!buf)
        return ENOMEM;
    int e = hash_path(path, TL_OPEN_FOLLOW, buf, hex, bytes);
    free(buf);
    return e;
}

typedef struct job {
    const char *const *paths;
    tl_hash_result *out;
    size_t n;
    int flags;
    size_t next;
    pthread_mutex_t mu;
} job;

static void *worker(void *arg)
{
    job *j = arg;
    unsigned char *buf = malloc(TL_READ_CHUNK);
    for (;;) {
        pthread_mutex_lock(&j->mu);
        size_t i = j->next++;
        pthread_mutex_unlock(&j->mu);
        if (i >= j->n)
            break;
        tl_hash_result *r = &j->out[i];
        r->hex[0] = '\0';
        r->bytes = 0;
        r->err = buf ? hash_path(j->paths[i], j->flags, buf, r->hex, &r->bytes) : ENOMEM;
    }
    free(buf);
    return NULL;
}

void tl_hash_files(const char *const *paths, size_t n, tl_hash_result *out, int nthreads)
{
    tl_hash_files_flags(paths, n, out, nthreads, TL_OPEN_FOLLOW);
}

void tl_hash_files_flags(const char *const *paths, size_t n, tl_hash_result *out, int nthreads, int flags)
{
    job j = { paths, out, n, flags, 0, PTHREAD_MUTEX_INITIALIZER };
    if (nthreads <= 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        nthreads = c > 0 ? (int)c : 1;
        if (nthreads > 8)
            nthreads = 8;
    }
    /* Threads pay off when there are several files; a handful of tiny files is not worth it,
     * but we cannot know sizes cheaply without a stat, so use the count. */
    if ((size_t)nthreads > n)
        nthreads = (int)n;
    if (nthreads <= 1 || n < 4) {
        worker(&j);
        return;
    }
    pthread_t *t = calloc((size_t)nthreads, sizeof *t);
    int started = 0;
    for (int i = 0; t && i < nthreads - 1; i++)
        if (pthread_create(&t[i], NULL, worker, &j) == 0)
            started++;
    worker(&j); /* the calling thread works too */
    for (int i = 0; i < started; i++)
        pthread_join(t[i], NULL);
    free(t);
    pthread_mutex_destroy(&j.mu);
}

int tl_is_sha256_hex(const char *s)
{
    if (!s)
        return 0;
    size_t i = 0;
    for (; s[i]; i++)
        if (i >= 64 || !((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return i == 64;
}
