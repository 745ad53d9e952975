/*
 * tl_opt.h - the one command-line convention of `tandem` and its player (getopt_long).
 *
 * Each verb describes its options in one table (long name, short name, argument kind,
 * range, metavariable, help text); the parser and `--help` are both generated from it,
 * so the help cannot drift from what is accepted. Conventions:
 *   --opt value, --opt=value, -o value, -ovalue, bundled short flags (-qx), `--` ends
 *   the options; -h/--help prints the generated help (exit 0 for the caller).
 * Numbers are checked: strtoll/strtod, no trailing garbage, no leading space, finite,
 * within the table's range. One error format, on stderr, exit 2 for the caller:
 *   tandem attempt: --rounds: not a number: '1x'
 *   tandem attempt: --rounds: expected an integer from 1 to 20
 * Options are looked up by their long name (a name not in the table is a programming
 * error: abort()).
 */
#ifndef TL_OPT_H
#define TL_OPT_H
#include <stdio.h>

typedef enum tl_opt_kind {
    TL_OPT_FLAG,   /* no argument; counted */
    TL_OPT_STR,    /* a string (may be empty) */
    TL_OPT_PATH,   /* a path: a non-empty string */
    TL_OPT_INT,    /* a decimal integer in [min, max] */
    TL_OPT_DOUBLE  /* a finite decimal number in [min, max] */
} tl_opt_kind;

typedef struct tl_opt {
    const char *name;  /* long name without "--"; NULL ends the table */
    char short_name;   /* 0: none */
    tl_opt_kind kind;
    const char *arg;   /* metavariable in the help (e.g. "DIR", "N"); NULL: from the kind */
    double min, max;   /* TL_OPT_INT / TL_OPT_DOUBLE range (inclusive) */
    const char *help;  /* NULL: accepted but not listed (tests only); '\n' continues a line */
} tl_opt;

typedef struct tl_optspec {
    const char *prog;     /* "tandem attempt", "tandem-player" */
    const char *synopsis; /* what follows "usage: PROG " (lines after '\n' are indented) */
    const char *about;    /* paragraphs between the synopsis and the options, or NULL */
    const tl_opt *opts;
    const char *after;    /* text after the options (exit codes), or NULL */
    int min_pos, max_pos; /* positional arguments accepted (max_pos -1: any number) */
} tl_optspec;

typedef struct tl_optval {
    int count;           /* times given */
    const char *s;       /* last value as given */
    long long i;         /* last value (TL_OPT_INT) */
    double d;            /* last value (TL_OPT_INT, TL_OPT_DOUBLE) */
    const char **all;    /* every value in order (count entries) */
} tl_optval;

typedef struct tl_optres {
    const tl_optspec *spec;
    tl_optval *v;        /* one per table entry */
    int npos;
    char **pos;          /* positional arguments, in order */
} tl_optres;

enum { TL_OPT_OK = 0, TL_OPT_HELP = 1, TL_OPT_USAGE = 2 };

/* Parse argv (argv[0] is the verb or program; argv is permuted as getopt_long does).
 * TL_OPT_OK; TL_OPT_HELP: the help was printed to stdout (exit 0); TL_OPT_USAGE: an error
 * was printed (exit 2). res is always valid for tl_opt_free. */
int tl_opt_parse(const tl_optspec *spec, int argc, char **argv, tl_optres *res);
void tl_opt_free(tl_optres *res);

/* While a slot is set (not NULL), --help records the verb's spec in *slot instead of
 * printing the help (tl_opt_parse still returns TL_OPT_HELP): `tandem completion` reads
 * every verb's option table this way, so the completion cannot drift from the parser. */
void tl_opt_capture(const tl_optspec **slot);

/* The generated help (what --help prints). */
void tl_opt_help(const tl_optspec *spec, FILE *out);

int tl_opt_given(const tl_optres *res, const char *name);
const char *tl_opt_str(const tl_optres *res, const char *name, const char *def);
long long tl_opt_int(const tl_optres *res, const char *name, long long def);
double tl_opt_double(const tl_optres *res, const char *name, double def);
/* Every value of a repeatable option; *n gets the count. */
const char *const *tl_opt_all(const tl_optres *res, const char *name, int *n);

/* "PROG: what" on stderr in the convention's format (for checks made after parsing, such
 * as a value outside a fixed set): e.g. tl_opt_fail(&res, "--backend", "'x' is not aot or jit").
 * Returns TL_OPT_USAGE. */
int tl_opt_fail(const tl_optres *res, const char *opt, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The candidate nearest to word[0..len) for a "did you mean" hint: the only one it is a
 * prefix of, else the one at the smallest edit distance when that is at most 2 and under
 * half the word's length; NULL when none is near (a guess would mislead). */
const char *tl_opt_nearest(const char *word, size_t len, const char *const *cands, size_t n);

/* The checked conversions the parser uses (0 ok; else -1 and why: "not a number", ...). */
int tl_opt_parse_int(const char *s, long long min, long long max, long long *out, const char **why);
int tl_opt_parse_double(const char *s, double min, double max, double *out, const char **why);

#endif
