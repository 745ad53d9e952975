#include "tl_err.h"

#include <stdarg.h>
#include <string.h>

static char *cap_buf;
static size_t cap_len;
static int cap_quiet;
static int cap_set;

void tl_err_capture(char *buf, size_t len, int quiet)
{
    cap_buf = buf;
    cap_len = len;
    cap_quiet = quiet;
    cap_set = 0;
    if (buf && len)
        buf[0] = '\0';
}

void tl_error(const char *file, const char *field, const char *fmt, ...)
{
    char reason[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    char line[4096];
    if (file && field)
        snprintf(line, sizeof line, "%s: %s: %s", file, field, reason);
    else if (file)
        snprintf(line, sizeof line, "%s: %s", file, reason);
    else
        snprintf(line, sizeof line, "%s", reason);
    if (cap_buf && cap_len && !cap_set) {
        snprintf(cap_buf, cap_len, "%s", line);
        cap_set = 1;
    }
    if (!(cap_buf && cap_quiet))
        fprintf(stderr, "%s\n", line);
}

void tl_mismatch(tl_report *r, const char *kind, const char *name, const char *fmt, ...)
{
    char detail[2048] = "";
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(detail, sizeof detail, fmt, ap);
        va_end(ap);
    }
    char line[4096];
    snprintf(line, sizeof line, "%s%s%s: %s%s%s%s", r->prefix ? r->prefix : "", r->prefix ? ": " : "", kind,
             name, detail[0] ? " (" : "", detail, detail[0] ? ")" : "");
    if (r->out)
        fprintf(r->out, "%s\n", line);
    if (r->count == 0 && r->first && r->firstlen)
        snprintf(r->first, r->firstlen, "%s", line);
    r->count++;
}
