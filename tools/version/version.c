/*
 * version.c - `tandem --version` / `tandem version`: one line for a bug report, with
 * tandem's version and git revision and the version of every component it is built on:
 * the clang that compiles the AOT player, LLVM (the LLVM-C API of the inspector), tcc
 * (libtcc, the JIT), cJSON, libarchive and OpenSSL. Library versions are asked of the
 * libraries at run time where they can tell (cJSON, libarchive, OpenSSL); the others are
 * recorded when tandem is configured (clang, tcc) or compiled (LLVM's headers).
 */
#include "tl_opt.h"
#include "version_gitrev.h" /* TANDEM_GIT_REV, written at build time */

#include <archive.h>
#include <cjson/cJSON.h>
#include <llvm/Config/llvm-config.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <string.h>
#if LLVM_VERSION_MAJOR >= 16
#include <llvm-c/Core.h>
#endif

#ifndef TANDEM_VERSION
#define TANDEM_VERSION "unknown"
#endif
#ifndef TD_CLANG_VERSION
#define TD_CLANG_VERSION "unknown"
#endif
#ifndef TD_TCC_VERSION
#define TD_TCC_VERSION "unknown"
#endif

/* "libarchive 3.6.2 zlib/1.2.13 ..." -> "3.6.2"; "OpenSSL 3.0.15 3 Sep 2024" -> "3.0.15" */
static const char *second_word(const char *s, char *buf, size_t len)
{
    const char *p = s ? strchr(s, ' ') : NULL;
    if (!p) return s ? s : "unknown";
    p++;
    snprintf(buf, len, "%.*s", (int)strcspn(p, " "), p);
    return buf[0] ? buf : "unknown";
}

static void llvm_version(char *buf, size_t len)
{
#if LLVM_VERSION_MAJOR >= 16
    unsigned ma, mi, pa;
    LLVMGetVersion(&ma, &mi, &pa);
    snprintf(buf, len, "%u.%u.%u", ma, mi, pa);
#else
    snprintf(buf, len, "%s", LLVM_VERSION_STRING);
#endif
}

void td_version_line(char *out, size_t len)
{
    char arch[64], ssl[64], llvm[32];
    llvm_version(llvm, sizeof llvm);
    snprintf(out, len, "tandem %s (git %s); clang %s; LLVM %s; tcc %s; cJSON %s; libarchive %s; OpenSSL %s",
             TANDEM_VERSION, TANDEM_GIT_REV, TD_CLANG_VERSION, llvm, TD_TCC_VERSION, cJSON_Version(),
             second_word(archive_version_string(), arch, sizeof arch),
             second_word(OpenSSL_version(OPENSSL_VERSION), ssl, sizeof ssl));
}

static const tl_opt version_opts[] = { { NULL, 0, 0, NULL, 0, 0, NULL } };

static const tl_optspec version_spec = {
    "tandem version", "",
    "One line: tandem's version and git revision, then clang, LLVM, tcc, cJSON, libarchive and\n"
    "OpenSSL (what a bug report needs). Same as `tandem --version`.",
    version_opts, "Exit: 0.", 0, 0
};

int td_verb_version(int argc, char **argv)
{
    tl_optres o;
    int prc = tl_opt_parse(&version_spec, argc, argv, &o);
    tl_opt_free(&o);
    if (prc) return prc == TL_OPT_HELP ? 0 : 2;
    char line[512];
    td_version_line(line, sizeof line);
    printf("%s\n", line);
    return 0;
}
