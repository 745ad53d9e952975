/*
 * word.c - the debug build's reports of a broken invariant (TD_DEBUG; detail/word.h). A
 * measured build compiles nothing here: its TD_ASSERT and TD_ASSERT_STATE are empty.
 */
#include "../port/td_libc.h"
#include "td_internal.h"

#if defined(TD_DEBUG)
#include <stdio.h>

static const char *const word_actor_names[] = {
    "owner", "claimer", "completer", "handover", "registrar", "sharer", "consumer"
};
static const char *const word_status_names[] = { "PENDING", "SUCCEEDED", "FAULTED", "CANCELED" };
static const char *const word_mode_names[] = { "NONE", "AWAITED", "SHARED", "CONSUMED" };

static void word_describe(char *buf, size_t len, uint32_t w)
{
    snprintf(buf, len, "0x%08x (version 0x%x, %s, mode %s%s%s%s%s%s%s)", w,
             (w & TD_WORD_VERSION_MASK) >> TD_WORD_VERSION_SHIFT,
             word_status_names[w & TD_WORD_STATUS_MASK],
             word_mode_names[(w & TD_WORD_MODE_MASK) >> TD_WORD_MODE_SHIFT],
             (w & TD_WORD_CLAIMED) ? ", claimed" : "", (w & TD_WORD_IMMORTAL) ? ", immortal" : "",
             (w & TD_WORD_STAMPED) ? ", stamped" : "", (w & TD_WORD_RECORD) ? ", record" : "",
             (w & TD_WORD_POOLED) ? ", pooled" : "", (w & TD_WORD_RESUMES_RUNNER) ? ", resumes" : "");
}

void td_word_illegal_(const td_source *s, int actor, uint32_t old, uint32_t nw, const char *rule,
                      const char *file, int line)
{
    char before[128], after[128];
    word_describe(before, sizeof(before), old);
    word_describe(after, sizeof(after), nw);
    const char *kind = (s && s->ops && s->ops->name) ? s->ops->name : "unnamed";
    const char *who = (actor >= 0 && actor <= TD_ACTOR_CONSUMER) ? word_actor_names[actor] : "?";
    fprintf(stderr, "%s:%d: tandem: illegal word transition on a %s source by the %s: %s -> %s; rule: %s\n",
            file, line, kind, who, before, after, rule);
    fflush(stderr);
    abort();
}

void td_assert_fail_(const char *expr, const char *file, int line)
{
    fprintf(stderr, "%s:%d: tandem: assertion failed: %s\n", file, line, expr);
    fflush(stderr);
    abort();
}
#else
typedef int td_word_measured_build_has_no_reports_;     /* ISO C: a unit declares something */
#endif
