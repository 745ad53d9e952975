/*
 * test_opt.c - tl_opt, the option parser every verb uses: checked numbers (bad numbers,
 * trailing garbage, range, non-finite), --opt=value, `--`, bundled short options, unknown
 * and ambiguous options, missing values, repeated options, positional counts, and the
 * help generated from the table. Each check prints what it expected; any failure fails.
 */
#include "tl_opt.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fails, checks;

#define CHECK(cond, ...)                                                          \
    do {                                                                          \
        checks++;                                                                 \
        if (!(cond)) {                                                            \
            fails++;                                                              \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                  \
            fprintf(stderr, __VA_ARGS__);                                         \
            fputc('\n', stderr);                                                  \
        }                                                                         \
    } while (0)

static const tl_opt opts[] = {
    { "rounds", 0, TL_OPT_INT, "N", 1, 20, "rounds" },
    { "timeout", 't', TL_OPT_DOUBLE, "SEC", 0.001, 86400, "timeout" },
    { "out", 'o', TL_OPT_PATH, "DIR", 0, 0, "output folder" },
    { "label", 0, TL_OPT_STR, "L", 0, 0, "label\nsecond line" },
    { "quick", 'q', TL_OPT_FLAG, NULL, 0, 0, "quick" },
    { "verbose", 'v', TL_OPT_FLAG, NULL, 0, 0, "verbose" },
    { "include", 'I', TL_OPT_PATH, "DIR", 0, 0, "include (repeat)" },
    { "report", 0, TL_OPT_FLAG, NULL, 0, 0, "report" },
    { "secret", 0, TL_OPT_STR, NULL, 0, 0, NULL },
    { NULL, 0, 0, NULL, 0, 0, NULL }
};
static const tl_optspec spec = { "tandem t", "[options] [FILE]", "About text.", opts, "Exit: 0.", 0, 1 };

/* Parse a NULL-terminated argument list (copied: getopt permutes), capturing stderr. */
static int parse(tl_optres *r, char *err, size_t errlen, ...)
{
    static char *argv[32];
    static char store[32][256];
    va_list ap;
    va_start(ap, errlen);
    int argc = 0;
    argv[argc++] = "t";
    for (const char *s; (s = va_arg(ap, const char *)) && argc < 31;) {
        snprintf(store[argc], sizeof store[argc], "%s", s);
        argv[argc] = store[argc];
        argc++;
    }
    va_end(ap);
    argv[argc] = NULL;
    fflush(stderr);
    FILE *tmp = tmpfile();
    int saved = dup(2);
    dup2(fileno(tmp), 2);
    int rc = tl_opt_parse(&spec, argc, argv, r);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    size_t n = fread(err, 1, errlen - 1, tmp);
    err[n] = 0;
    fclose(tmp);
    return rc;
}

int main(void)
{
    tl_optres r;
    char err[4096];
    int rc;

    /* values, both spellings, defaults */
    rc = parse(&r, err, sizeof err, "--rounds", "3", "--timeout=2.5", "-o", "dir", "--label=", NULL);
    CHECK(rc == TL_OPT_OK, "plain options: rc %d, stderr '%s'", rc, err);
    CHECK(tl_opt_int(&r, "rounds", -1) == 3, "--rounds 3 gave %lld", tl_opt_int(&r, "rounds", -1));
    CHECK(tl_opt_double(&r, "timeout", 0) == 2.5, "--timeout=2.5 gave %g", tl_opt_double(&r, "timeout", 0));
    CHECK(!strcmp(tl_opt_str(&r, "out", ""), "dir"), "-o dir gave '%s'", tl_opt_str(&r, "out", ""));
    CHECK(!strcmp(tl_opt_str(&r, "label", "x"), ""), "--label= is an empty string");
    CHECK(!tl_opt_given(&r, "quick"), "--quick not given, yet counted");
    CHECK(tl_opt_str(&r, "secret", "def") && !strcmp(tl_opt_str(&r, "secret", "def"), "def"), "default of an absent option");
    tl_opt_free(&r);

    /* short forms: attached value, bundled flags, a bundle ending in a value */
    rc = parse(&r, err, sizeof err, "-qv", "-odir2", "-qIinc1", "-I", "inc2", "--include=inc3", "-t", "7", NULL);
    CHECK(rc == TL_OPT_OK, "short options: rc %d, stderr '%s'", rc, err);
    CHECK(tl_opt_given(&r, "quick") == 2 && tl_opt_given(&r, "verbose") == 1, "-qv -qI: quick %d verbose %d",
          tl_opt_given(&r, "quick"), tl_opt_given(&r, "verbose"));
    CHECK(!strcmp(tl_opt_str(&r, "out", ""), "dir2"), "-odir2 gave '%s'", tl_opt_str(&r, "out", ""));
    int n;
    const char *const *inc = tl_opt_all(&r, "include", &n);
    CHECK(n == 3 && !strcmp(inc[0], "inc1") && !strcmp(inc[1], "inc2") && !strcmp(inc[2], "inc3"),
          "repeated -I: %d values", n);
    CHECK(tl_opt_double(&r, "timeout", 0) == 7, "-t 7");
    tl_opt_free(&r);

    /* `--` ends the options; positionals anywhere before it */
    rc = parse(&r, err, sizeof err, "--", "--rounds", NULL);
    CHECK(rc == TL_OPT_OK && r.npos == 1 && !strcmp(r.pos[0], "--rounds") && !tl_opt_given(&r, "rounds"),
          "-- then --rounds: rc %d npos %d", rc, r.npos);
    tl_opt_free(&r);
    rc = parse(&r, err, sizeof err, "file", "--quick", NULL);
    CHECK(rc == TL_OPT_OK && r.npos == 1 && !strcmp(r.pos[0], "file") && tl_opt_given(&r, "quick"),
          "positional before an option: rc %d", rc);
    tl_opt_free(&r);

    /* refused, with the option named and the value quoted */
    static const struct { const char *args[4]; const char *want; } bad[] = {
        { { "--rounds", "1x" }, "tandem t: --rounds: not a number: '1x'\n" },
        { { "--rounds=x" }, "tandem t: --rounds: not a number: 'x'\n" },
        { { "--rounds", "" }, "tandem t: --rounds: not a number: ''\n" },
        { { "--rounds", " 3" }, "tandem t: --rounds: not a number: ' 3'\n" },
        { { "--rounds", "3 " }, "tandem t: --rounds: not a number: '3 '\n" },
        { { "--rounds", "0x3" }, "tandem t: --rounds: not a number: '0x3'\n" },
        { { "--rounds", "1.5" }, "tandem t: --rounds: not an integer: '1.5'\n" },
        { { "--rounds", "1e99" }, "tandem t: --rounds: not an integer: '1e99'\n" },
        { { "--rounds", "21" }, "tandem t: --rounds: out of range: '21'\n" },
        { { "--rounds=-3" }, "tandem t: --rounds: out of range: '-3'\n" },
        { { "--rounds", "99999999999999999999999" }, "tandem t: --rounds: out of range: '99999999999999999999999'\n" },
        { { "--timeout", "inf" }, "tandem t: --timeout: not a finite number: 'inf'\n" },
        { { "--timeout", "nan" }, "tandem t: --timeout: not a finite number: 'nan'\n" },
        { { "-t", "0" }, "tandem t: --timeout: out of range: '0'\n" },
        { { "--timeout", "2s" }, "tandem t: --timeout: not a number: '2s'\n" },
        { { "--rounds" }, "tandem t: --rounds: needs a value (N)\n" },
        { { "-o" }, "tandem t: --out: needs a value (DIR)\n" },
        { { "--out", "" }, "tandem t: --out: empty path\n" },
        { { "--quick=1" }, "tandem t: --quick: takes no value\n" },
        { { "--nope" }, "tandem t: unknown option '--nope' (tandem t --help lists the options)\n" },
        { { "--nope=3" }, "tandem t: unknown option '--nope' (tandem t --help lists the options)\n" },
        { { "-x" }, "tandem t: unknown option '-x' (tandem t --help lists the options)\n" },
        { { "-qx" }, "tandem t: unknown option '-x' (tandem t --help lists the options)\n" },
        { { "--r" }, "tandem t: ambiguous option '--r' (tandem t --help lists the options)\n" },
        { { "a", "b" }, "tandem t: unexpected argument 'b'\n" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *const *a = bad[i].args;
        rc = parse(&r, err, sizeof err, a[0], a[1], a[2], a[3], NULL);
        CHECK(rc == TL_OPT_USAGE, "%s %s: rc %d, expected %d (usage)", a[0], a[1] ? a[1] : "", rc, TL_OPT_USAGE);
        CHECK(!strncmp(err, bad[i].want, strlen(bad[i].want)), "%s %s: stderr\n  '%s'\nexpected it to start with\n  '%s'",
              a[0], a[1] ? a[1] : "", err, bad[i].want);
        tl_opt_free(&r);
    }
    /* a number refused also says what is expected */
    parse(&r, err, sizeof err, "--rounds", "1x", NULL);
    CHECK(strstr(err, "tandem t: --rounds: expected an integer from 1 to 20\n") != NULL, "range line: '%s'", err);
    tl_opt_free(&r);
    parse(&r, err, sizeof err, "--timeout", "-1", NULL);
    CHECK(strstr(err, "tandem t: --timeout: expected a number from 0.001 to 86400\n") != NULL, "range line: '%s'", err);
    tl_opt_free(&r);

    /* abbreviations that are unique are accepted (getopt_long) */
    rc = parse(&r, err, sizeof err, "--rou=4", NULL);
    CHECK(rc == TL_OPT_OK && tl_opt_int(&r, "rounds", 0) == 4, "--rou=4: rc %d", rc);
    tl_opt_free(&r);

    /* the conversions on their own */
    long long x;
    double d;
    const char *why;
    CHECK(tl_opt_parse_int("-5", -10, 10, &x, &why) == 0 && x == -5, "-5 in [-10, 10]");
    CHECK(tl_opt_parse_int("+7", 0, 10, &x, &why) == 0 && x == 7, "+7");
    CHECK(tl_opt_parse_int("9223372036854775808", 0, 1e18, &x, &why) && !strcmp(why, "out of range"), "overflow");
    CHECK(tl_opt_parse_double("1e-3", 0, 1, &d, &why) == 0 && d == 1e-3, "1e-3");
    CHECK(tl_opt_parse_double("1e999", 0, 1e300, &d, &why) && !strcmp(why, "not a finite number"), "1e999: %s", why);
    CHECK(tl_opt_parse_double("", 0, 1, &d, &why) && !strcmp(why, "not a number"), "empty");

    /* the help is generated from the table: every listed option, its metavariable and range;
     * hidden options absent; continuation lines indented */
    FILE *h = tmpfile();
    tl_opt_help(&spec, h);
    rewind(h);
    static char help[8192];
    size_t hn = fread(help, 1, sizeof help - 1, h);
    help[hn] = 0;
    fclose(h);
    CHECK(!strncmp(help, "usage: tandem t [options] [FILE]\n", 33), "usage line: '%.40s'", help);
    CHECK(strstr(help, "  -h, --help") != NULL, "help lists --help");
    CHECK(strstr(help, "  --rounds N ") && strstr(help, "[integer, 1 to 20]"), "help lists --rounds N and its range");
    CHECK(strstr(help, "  -t, --timeout SEC") && strstr(help, "[number, 0.001 to 86400]"), "help lists -t, --timeout SEC");
    CHECK(strstr(help, "  -I, --include DIR") != NULL, "help lists -I, --include DIR");
    CHECK(strstr(help, "label\n                        second line") != NULL, "continuation line indented");
    CHECK(!strstr(help, "secret"), "a hidden option is not listed");
    for (const tl_opt *o = opts; o->name; o++) {
        char want[64];
        snprintf(want, sizeof want, "--%s", o->name);
        CHECK(!o->help || strstr(help, want), "help lacks %s", want);
    }
    rc = parse(&r, err, sizeof err, "--rounds", "2", "--help", NULL);
    CHECK(rc == TL_OPT_HELP, "--help: rc %d", rc);
    tl_opt_free(&r);

    printf("test_opt: %d checks, %d failed\n", checks, fails);
    return fails ? 1 : 0;
}
