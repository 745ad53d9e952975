/* libFuzzer target for the staging.json and binary-manifest parsers (strict JSON layer,
 * duplicate keys, field validation). Built only when clang -fsanitize=fuzzer works. */
#include "tl_err.h"
#include "tl_manifest.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char sink[256];
    tl_err_capture(sink, sizeof sink, 1); /* keep the fuzzer's output quiet */
    tl_staging st;
    if (tl_staging_parse("fuzz", (const char *)data, size, &st) == 0)
        tl_staging_free(&st);
    tl_bmanifest m;
    if (tl_bmanifest_parse("fuzz", (const char *)data, size, &m) == 0)
        tl_bmanifest_free(&m);
    return 0;
}
