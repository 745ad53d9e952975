/*
 * meter.c - the player shell's instruction meter (`tandem-player --meter instructions`).
 *
 * The player runs under valgrind callgrind, started with collection off
 * (--collect-atstart=no --dump-instr=yes --dump-line=no --compress-pos=no
 * --compress-strings=no). The benchmark harness (td_bench.h) calls host->meter_on/off
 * around every timed segment with the segment's meter slot; the shell switches
 * collection on only for the slot of the current pass (meters that interleave or nest
 * have different slots, and the shell runs one pass per slot over each suite call). When
 * a row sample is emitted (host->meter_row) the shell asks callgrind to dump what was
 * collected since the last dump, labelled "tdrow <row> <sample>".
 *
 * After the run, still inside the process (so the AOT modules and the JIT's in-memory
 * code are still mapped), the shell reads every dump of its own pid and, for each executed
 * instruction address (callgrind's self cost per instruction), reads the instruction's
 * bytes from its own memory and decodes just enough x86-64 to count:
 *   locked    lock-prefixed instructions and xchg with a memory operand
 *   calls     call instructions (E8 rel32, FF /2, FF /3)
 *   indirect  the FF /2, FF /3 ones
 * Instructions in the shell executable itself (the host callbacks and the counting
 * allocator's relaxed atomic adds) are counted apart as the harness's.
 * With --meter-functions (pl_meter_by_function) each row's instructions are also summed per
 * function, under the name callgrind gives it (the `fn=` of the dump: a symbol of the AOT
 * module, the shell or a library). Code callgrind sees without symbols (tcc's, in memory) is
 * named by address from the functions the backend lists (pl_meter_code_functions), and what
 * none of them holds is one entry, PL_METER_UNSYMBOLIZED.
 * Without valgrind headers at build time the meter reports itself unavailable.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "backend.h"
#include "meter.h"

#if defined(TD_HAVE_CALLGRIND) && TD_HAVE_CALLGRIND
#include <valgrind/callgrind.h>
#define PL_ON_VALGRIND() (RUNNING_ON_VALGRIND != 0)
#define PL_TOGGLE() CALLGRIND_TOGGLE_COLLECT
#define PL_ZERO() CALLGRIND_ZERO_STATS
#define PL_DUMP(label) CALLGRIND_DUMP_STATS_AT(label)
#define PL_HAVE 1
#else
#define PL_ON_VALGRIND() 0
#define PL_TOGGLE() ((void)0)
#define PL_ZERO() ((void)0)
#define PL_DUMP(label) ((void)(label))
#define PL_HAVE 0
#endif

static struct {
    int enabled;          /* --meter instructions */
    int pass;             /* slot collected in this call; -1 none (warm-up) */
    int collecting;
    int max_slot;
    long dumps;           /* dumps requested */
    char prefix[PATH_MAX];
    pl_icount *rows;
    size_t nrows;
    int by_function;      /* --meter-functions */
    pl_fn_list *row_fns;  /* per row (parallel to rows): instructions by function */
    const td_backend_function *code_fns;   /* code without symbols: its functions by address */
    size_t ncode_fns;
    const char *code_object;
    /* object name -> load bias cache */
    struct { char *name; uintptr_t bias; int ok; } obj[64];
    int nobj;
    /* readable mappings */
    struct { uintptr_t lo, hi; } map[4096];
    int nmap;
} M;

int pl_meter_available(void) { return PL_HAVE; }

/* ---- instructions by function ------------------------------------------------------------ */

/* The entry of (object, function) in l, added with 0 instructions when missing; -1 out of
 * memory. Linear: a row runs a few dozen functions, and a dump names each function once. */
static long fn_find_or_add(pl_fn_list *l, const char *object, const char *function)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->v[i].function, function) && !strcmp(l->v[i].object, object)) return (long)i;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 32;
        pl_fn_cost *v = realloc(l->v, cap * sizeof *v);
        if (!v) return -1;
        l->v = v;
        l->cap = cap;
    }
    pl_fn_cost *e = &l->v[l->n];
    e->object = strdup(object);
    e->function = strdup(function);
    e->ir = 0;
    if (!e->object || !e->function) {
        free(e->object);
        free(e->function);
        return -1;
    }
    return (long)l->n++;
}

static void fn_list_free(pl_fn_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].object);
        free(l->v[i].function);
    }
    free(l->v);
    memset(l, 0, sizeof *l);
}

void pl_meter_by_function(int on) { M.by_function = on; }

void pl_meter_code_functions(const td_backend_function *v, size_t n, const char *object)
{
    M.code_fns = v;
    M.ncode_fns = n;
    M.code_object = object;
}

/* The listed function holding addr, or NULL. */
static const td_backend_function *code_function_at(uintptr_t addr)
{
    size_t lo = 0, hi = M.ncode_fns;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const td_backend_function *f = &M.code_fns[mid];
        if (addr < f->addr) hi = mid;
        else if (addr >= f->addr + f->size) lo = mid + 1;
        else return f;
    }
    return NULL;
}

int pl_meter_start(const char *prefix, char *err, size_t len)
{
    if (!PL_HAVE) {
        snprintf(err, len, "this player was built without valgrind's callgrind.h (install valgrind and rebuild)");
        return -1;
    }
    if (!PL_ON_VALGRIND()) {
        snprintf(err, len, "--meter instructions needs the player to run under valgrind --tool=callgrind "
                           "(tandem bench --meter instructions does that)");
        return -1;
    }
    if (!prefix || !prefix[0] || strlen(prefix) + 32 >= sizeof M.prefix) {
        snprintf(err, len, "--meter-out: the callgrind output file given to valgrind is needed (and must be shorter "
                           "than %zu bytes)", sizeof M.prefix - 32);
        return -1;
    }
    snprintf(M.prefix, sizeof M.prefix, "%s", prefix);
    M.enabled = 1;
    M.pass = -1;
    return 0;
}

int pl_meter_enabled(void) { return M.enabled; }

void pl_meter_set_pass(int pass)
{
    if (M.collecting) { /* a segment left open: close it so nothing leaks into the next call */
        PL_TOGGLE();
        M.collecting = 0;
    }
    M.pass = pass;
    PL_ZERO();
}

int pl_meter_max_slot(void) { return M.max_slot; }

void pl_meter_on(int32_t slot)
{
    if (slot > M.max_slot && slot < 64) M.max_slot = slot;
    if (M.pass < 0 || slot != M.pass || M.collecting) return;
    M.collecting = 1;
    PL_TOGGLE();
}

void pl_meter_off(int32_t slot)
{
    if (!M.collecting || slot != M.pass) return;
    PL_TOGGLE();
    M.collecting = 0;
}

static pl_icount *row_slot(size_t row)
{
    if (row >= M.nrows) {
        size_t n = row + 16;
        pl_icount *p = realloc(M.rows, n * sizeof *p);
        if (!p) abort();
        memset(p + M.nrows, 0, (n - M.nrows) * sizeof *p);
        M.rows = p;
        pl_fn_list *f = realloc(M.row_fns, n * sizeof *f);
        if (!f) abort();
        memset(f + M.nrows, 0, (n - M.nrows) * sizeof *f);
        M.row_fns = f;
        M.nrows = n;
    }
    return &M.rows[row];
}

void pl_meter_row(size_t row, int sample, int32_t slot, uint64_t segments)
{
    if (M.pass < 0 || slot != M.pass || sample < 0 || sample >= PL_METER_MAX_SAMPLES) return;
    char label[64];
    snprintf(label, sizeof label, "tdrow %zu %d", row, sample);
    pl_icount *c = row_slot(row);
    c->segments += segments;
    c->requested++;
    M.dumps++;
    PL_DUMP(label);
}

/* ---- reading the dumps ---------------------------------------------------------------- */

static void load_maps(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[1024];
    M.nmap = 0;
    if (!f) return;
    while (fgets(line, sizeof line, f) && M.nmap < (int)(sizeof M.map / sizeof M.map[0])) {
        unsigned long lo, hi;
        char perm[8];
        if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perm) == 3 && perm[0] == 'r') {
            M.map[M.nmap].lo = lo;
            M.map[M.nmap].hi = hi;
            M.nmap++;
        }
    }
    fclose(f);
}

static int readable(uintptr_t a, size_t n)
{
    for (int i = 0; i < M.nmap; i++)
        if (a >= M.map[i].lo && a + n <= M.map[i].hi) return 1;
    return 0;
}

struct bias_find { const char *want; uintptr_t bias; int found; };

static int bias_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct bias_find *b = data;
    char real[PATH_MAX];
    const char *name = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : "/proc/self/exe";
    if (!realpath(name, real)) return 0;
    if (strcmp(real, b->want)) return 0;
    b->bias = (uintptr_t)info->dlpi_addr;
    b->found = 1;
    return 1;
}

/* The load bias of a callgrind object name ("???": anonymous memory, e.g. the JIT's code,
 * printed with absolute addresses). 0 ok, -1 unknown. */
static int object_bias(const char *name, uintptr_t *bias, int *is_shell)
{
    for (int i = 0; i < M.nobj; i++)
        if (!strcmp(M.obj[i].name, name)) {
            *bias = M.obj[i].bias;
            *is_shell = M.obj[i].ok == 2;
            return M.obj[i].ok ? 0 : -1;
        }
    uintptr_t b = 0;
    int ok = 0;
    char real[PATH_MAX], exe[PATH_MAX];
    if (!strcmp(name, "???")) ok = 1;
    else if (realpath(name, real)) {
        struct bias_find f = { real, 0, 0 };
        dl_iterate_phdr(bias_cb, &f);
        if (f.found) {
            b = f.bias;
            ok = realpath("/proc/self/exe", exe) && !strcmp(exe, real) ? 2 : 1;
        }
    }
    if (M.nobj < (int)(sizeof M.obj / sizeof M.obj[0])) {
        M.obj[M.nobj].name = strdup(name);
        M.obj[M.nobj].bias = b;
        M.obj[M.nobj].ok = ok;
        M.nobj++;
    }
    *bias = b;
    *is_shell = ok == 2;
    return ok ? 0 : -1;
}

/* Just enough x86-64: legacy prefixes, REX, then the opcode. */
static void decode(const uint8_t *b, int *locked, int *call, int *indirect)
{
    int i = 0, lock = 0;
    for (; i < 14; i++) {
        uint8_t c = b[i];
        if (c == 0xF0) lock = 1;
        else if (c != 0xF2 && c != 0xF3 && c != 0x2E && c != 0x36 && c != 0x3E && c != 0x26 && c != 0x64 &&
                 c != 0x65 && c != 0x66 && c != 0x67)
            break;
    }
    if ((b[i] & 0xF0) == 0x40) i++;
    uint8_t op = b[i], modrm = b[i + 1];
    *locked = lock || ((op == 0x86 || op == 0x87) && (modrm >> 6) != 3);
    *call = op == 0xE8 || (op == 0xFF && (((modrm >> 3) & 7) == 2 || ((modrm >> 3) & 7) == 3));
    *indirect = op == 0xFF && (((modrm >> 3) & 7) == 2 || ((modrm >> 3) & 7) == 3);
}

/* What one dump's cost lines add up to (read_dump). */
typedef struct dump_sum {
    uint64_t ir;
    pl_icount acc;
    pl_fn_list fns;                    /* this dump's instructions by function (--meter-functions) */
    long fn;                           /* the entry of the current `fn=`, -1 none yet, -2 by address */
    const td_backend_function *code_fn; /* by address: the last function found, */
    long code_entry;                    /* and its entry */
} dump_sum;

/* A `fn=` line under the object obj (--meter-functions): the object as its file name; code
 * without one (the JIT's) is one entry. 0, or -1 out of memory. */
static int fn_line(dump_sum *d, const char *obj, const char *name)
{
    int anon = !strcmp(obj, "???");
    const char *base = strrchr(obj, '/') ? strrchr(obj, '/') + 1 : obj;
    if (anon && M.ncode_fns) d->fn = -2;
    else d->fn = fn_find_or_add(&d->fns, anon ? "(anonymous)" : base, anon ? PL_METER_UNSYMBOLIZED : name);
    return d->fn == -1 ? -1 : 0;
}

/* n instructions at addr into the current function's entry (--meter-functions). 0, or -1 out
 * of memory. */
static int fn_cost(dump_sum *d, uintptr_t addr, uint64_t n)
{
    long e = d->fn;
    if (e == -2) {   /* code without symbols: the listed function holding the address */
        if (!d->code_fn || addr < d->code_fn->addr || addr >= d->code_fn->addr + d->code_fn->size) {
            d->code_fn = code_function_at(addr);
            d->code_entry = d->code_fn ? fn_find_or_add(&d->fns, M.code_object, d->code_fn->name)
                                       : fn_find_or_add(&d->fns, "(anonymous)", PL_METER_UNSYMBOLIZED);
            if (d->code_entry < 0) d->code_fn = NULL;
        }
        e = d->code_entry;
    } else if (e == -1)
        e = d->fn = fn_find_or_add(&d->fns, "(none)", "(cost before any fn=)");
    if (e < 0) return -1;
    d->fns.v[e].ir += n;
    return 0;
}

/* A cost line, `0xADDR [more positions] COUNT`, of the object obj: its count, and what the
 * instruction at the address is (locked, a call, indirect; in the shell or not). 0, or -1
 * with err. */
static int cost_line(dump_sum *d, const char *path, char *line, int npos, const char *obj, char *err,
                     size_t len)
{
    char *p = line, *end;
    uintptr_t addr = (uintptr_t)strtoull(p, &end, 16);
    p = end;
    for (int k = 1; k < npos; k++) {
        strtoull(p, &end, 0);
        p = end;
    }
    uint64_t n = strtoull(p, &end, 10);
    if (end == p) {
        snprintf(err, len, "%s: cost line without a count: '%s'", path, line);
        return -1;
    }
    d->ir += n;
    if (M.by_function && fn_cost(d, addr, n)) {
        snprintf(err, len, "%s: out of memory summing instructions by function", path);
        return -1;
    }
    uintptr_t bias;
    int shell = 0;
    if (object_bias(obj, &bias, &shell) || !readable(addr + bias, 16)) {
        d->acc.undecoded += n;
        return 0;
    }
    int locked, call, indirect;
    decode((const uint8_t *)(addr + bias), &locked, &call, &indirect);
    if (shell) {
        d->acc.ir_harness += n;
        if (locked) d->acc.locked_harness += n;
    } else if (locked) d->acc.locked += n;
    if (call) d->acc.calls += n;
    if (indirect) d->acc.indirect += n;
    return 0;
}

/* One of our row dumps, summed in d, into its row's counts. 0, or -1 with err. */
static int dump_add(const dump_sum *d, const char *path, size_t row, int sample, char *err, size_t len)
{
    if (row >= M.nrows || !M.rows[row].requested || sample < 0 || sample >= PL_METER_MAX_SAMPLES) {
        snprintf(err, len, "%s: dump label row %zu sample %d was never requested", path, row, sample);
        return -1;
    }
    for (size_t i = 0; i < d->fns.n; i++) {
        long k = fn_find_or_add(&M.row_fns[row], d->fns.v[i].object, d->fns.v[i].function);
        if (k < 0) {
            snprintf(err, len, "%s: out of memory summing instructions by function", path);
            return -1;
        }
        M.row_fns[row].v[k].ir += d->fns.v[i].ir;
    }
    pl_icount *c = &M.rows[row];
    c->ir += d->ir;
    c->locked += d->acc.locked;
    c->locked_harness += d->acc.locked_harness;
    c->ir_harness += d->acc.ir_harness;
    c->calls += d->acc.calls;
    c->indirect += d->acc.indirect;
    c->undecoded += d->acc.undecoded;
    c->ir_sample[sample] += d->ir;
    c->dumps++;
    return 0;
}

/* One dump file. Returns 1 parsed (ours), 0 not ours (another pid), -1 error. */
static int read_dump(const char *path, char *err, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, len, "%s: %s", path, strerror(errno));
        return -1;
    }
    char line[8192], obj[PATH_MAX] = "???";
    long pid = -1;
    int npos = 1, have_label = 0, skip_next = 0, rc = 1;
    size_t row = 0;
    int sample = -1;
    uint64_t summary = 0;
    int have_summary = 0;
    dump_sum d;
    memset(&d, 0, sizeof d);
    d.fn = -1;
    d.code_entry = -1;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        if (skip_next) { /* the inclusive cost line of a call: not self cost */
            skip_next = 0;
            continue;
        }
        if (!strncmp(line, "pid: ", 5)) pid = strtol(line + 5, NULL, 10);
        else if (!strncmp(line, "desc: Trigger: Client Request: tdrow ", 37)) {
            unsigned long r;
            if (sscanf(line + 37, "%lu %d", &r, &sample) == 2) {
                row = r;
                have_label = 1;
            }
        } else if (!strncmp(line, "positions: ", 11)) {
            npos = 0;
            for (char *t = strtok(line + 11, " "); t; t = strtok(NULL, " ")) npos++;
        } else if (!strncmp(line, "events: ", 8)) {
            if (strncmp(line + 8, "Ir", 2) || (line[10] && line[10] != ' ')) {
                snprintf(err, len, "%s: events '%s', expected Ir first", path, line + 8);
                rc = -1;
                break;
            }
        } else if (!strncmp(line, "summary: ", 9) || !strncmp(line, "totals: ", 8)) {
            summary = strtoull(strchr(line, ':') + 1, NULL, 10);
            have_summary = 1;
        } else if (!strncmp(line, "ob=", 3)) snprintf(obj, sizeof obj, "%s", line + 3);
        else if (!strncmp(line, "fn=", 3) && M.by_function) {
            if (fn_line(&d, obj, line + 3)) {
                snprintf(err, len, "%s: out of memory summing instructions by function", path);
                rc = -1;
                break;
            }
        } else if (!strncmp(line, "calls=", 6)) skip_next = 1;
        else if (!strncmp(line, "0x", 2) && cost_line(&d, path, line, npos, obj, err, len)) {
            rc = -1;
            break;
        }
    }
    fclose(f);
    if (rc < 0 || pid != (long)getpid() || !have_label) /* not ours: another pid, or not a row dump */
        rc = rc < 0 ? -1 : 0;
    else if (have_summary && summary != d.ir) {
        snprintf(err, len, "%s: self costs add up to %" PRIu64 ", the dump's summary says %" PRIu64, path, d.ir,
                 summary);
        rc = -1;
    } else if (dump_add(&d, path, row, sample, err, len))
        rc = -1;
    fn_list_free(&d.fns);
    return rc;
}

int pl_meter_collect(char *err, size_t len)
{
    if (!M.enabled) return 0;
    load_maps();
    long found = 0;
    for (long i = 1;; i++) {
        char path[PATH_MAX + 32];
        snprintf(path, sizeof path, "%s.%ld", M.prefix, i);
        if (access(path, F_OK) != 0) {
            if (i > M.dumps + 64) break; /* dump numbers are per process: stop well past ours */
            continue;
        }
        int r = read_dump(path, err, len);
        if (r < 0) return -1;
        found += r;
    }
    if (found != M.dumps) {
        snprintf(err, len, "%ld row dumps requested, %ld found as %s.N", M.dumps, found, M.prefix);
        return -1;
    }
    for (size_t i = 0; i < M.nrows; i++)
        if (M.rows[i].dumps != M.rows[i].requested) {
            snprintf(err, len, "row %zu: %d dumps requested, %d read", i, M.rows[i].requested, M.rows[i].dumps);
            return -1;
        }
    return 0;
}

const pl_icount *pl_meter_row_counts(size_t row)
{
    if (!M.enabled || row >= M.nrows || !M.rows[row].requested) return NULL;
    return &M.rows[row];
}

/* ---- the report ------------------------------------------------------------------------ */

static double per(uint64_t v, uint64_t ops) { return ops ? (double)v / (double)ops : 0; }

static int fn_by_ir_desc(const void *a, const void *b)
{
    const pl_fn_cost *x = a, *y = b;
    if (x->ir != y->ir) return x->ir < y->ir ? 1 : -1;
    int c = strcmp(x->object, y->object);
    return c ? c : strcmp(x->function, y->function);
}

/* "functions": every function the row's segments ran instructions of, most first (ties by
 * object and name: the order is deterministic); their "ir" add up to the row's. A function
 * a dump names with no instruction of its own (a caller still on the stack) is left out. */
static void fn_json(cJSON *m, pl_fn_list *l, uint64_t ops)
{
    qsort(l->v, l->n, sizeof *l->v, fn_by_ir_desc);
    cJSON *a = cJSON_AddArrayToObject(m, "functions");
    for (size_t i = 0; i < l->n && l->v[i].ir; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "function", l->v[i].function);
        cJSON_AddStringToObject(e, "object", l->v[i].object);
        cJSON_AddNumberToObject(e, "ir", (double)l->v[i].ir);
        cJSON_AddNumberToObject(e, "irPerOp", per(l->v[i].ir, ops));
        cJSON_AddItemToArray(a, e);
    }
}

void pl_meter_row_json(cJSON *o, size_t row, uint64_t ops, int samples)
{
    const pl_icount *c = pl_meter_row_counts(row);
    if (!c) return;
    cJSON *m = cJSON_AddObjectToObject(o, "instructions");
    cJSON_AddNumberToObject(m, "ops", (double)ops);
    cJSON_AddNumberToObject(m, "ir", (double)c->ir);
    cJSON_AddNumberToObject(m, "locked", (double)c->locked);
    cJSON_AddNumberToObject(m, "calls", (double)c->calls);
    cJSON_AddNumberToObject(m, "indirectCalls", (double)c->indirect);
    cJSON_AddNumberToObject(m, "irHarness", (double)c->ir_harness);
    cJSON_AddNumberToObject(m, "lockedHarness", (double)c->locked_harness);
    cJSON_AddNumberToObject(m, "undecoded", (double)c->undecoded);
    cJSON_AddNumberToObject(m, "segments", (double)c->segments);
    cJSON_AddNumberToObject(m, "irPerOp", per(c->ir, ops));
    cJSON_AddNumberToObject(m, "lockedPerOp", per(c->locked, ops));
    cJSON_AddNumberToObject(m, "callsPerOp", per(c->calls, ops));
    cJSON_AddNumberToObject(m, "indirectCallsPerOp", per(c->indirect, ops));
    cJSON_AddNumberToObject(m, "irHarnessPerOp", per(c->ir_harness, ops));
    cJSON_AddNumberToObject(m, "segmentsPerOp", per(c->segments, ops));
    cJSON *a = cJSON_AddArrayToObject(m, "irSamples");
    for (int i = 0; i < samples && i < PL_METER_MAX_SAMPLES; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber((double)c->ir_sample[i]));
    if (M.by_function) fn_json(m, &M.row_fns[row], ops);
}

void pl_meter_report_json(cJSON *root)
{
    if (!M.enabled) return;
    cJSON *m = cJSON_AddObjectToObject(root, "meter");
    cJSON_AddStringToObject(m, "kind", "instructions");
    cJSON_AddStringToObject(m, "tool", "valgrind callgrind (collection on only inside timed segments)");
    cJSON_AddNumberToObject(m, "passes", M.max_slot + 1);
    cJSON_AddNumberToObject(m, "dumps", (double)M.dumps);
    cJSON_AddStringToObject(m, "locked", "lock-prefixed instructions and xchg with a memory operand, outside the "
                                         "shell executable (its allocation counters are lockedHarness)");
    cJSON_AddStringToObject(m, "calls", "call instructions executed (E8, FF /2, FF /3); indirectCalls: FF /2, FF /3");
}
