/*
 * tl_project.h - the project file `tandem.json`: what Tandem measures, and where it is.
 *
 * A measured project (this repository, or anyone's C library) has a tandem.json at its
 * root. Every path in it is relative to that root, or starts with "@tandem/" for a file
 * of Tandem's own source tree (the peers `callback` and `fcontext`, the benchmark suites):
 *
 *   {
 *     "tandemProject": 1,                       the schema version (this file's)
 *     "name": "mylib",                          a label for reports
 *     "runtime": {                              the library measured on both backends
 *       "sources": "src",                       its .c files (staged as runtime/src)
 *       "include": "include",                   its public headers (runtime/include)
 *       "port": "port",                         optional: compiler shims (runtime/port);
 *                                               it must provide td_port.h, which the
 *                                               player headers include (default: Tandem's)
 *       "contract": "contract.json"             optional: the codegen contract (inspect)
 *     },
 *     "subjects": {                             name (a C identifier) -> its workloads
 *       "mylib":    { "folder": "bench/mylib" },
 *       "callback": { "folder": "@tandem/players/subjects/callback" },
 *       "fcontext": { "folder": "@tandem/players/subjects/fcontext",
 *                     "link": ["boost_context"] }  optional: the libraries linked with the
 *                                               subject on both backends, each a library name
 *                                               (clang -lNAME, tcc_add_library) or an
 *                                               absolute path to a library file; staged as
 *                                               players/subjects/NAME/link.libs, the one
 *                                               source of truth (a link.libs in the folder
 *                                               itself is refused)
 *     },
 *     "suites": { "primary": "@tandem/players/suites/primary" },   name -> folder
 *     "smoke": "mysmoke",                       optional: a suite name above
 *     "gate": {
 *       "subject": "mylib",                     the subject under test
 *       "peers": ["fcontext"],                  what it is gated against
 *       "lowerBound": "callback",               report-only, in the same processes
 *       "gatedSuites": ["primary"],             optional: the suites that decide
 *       "unsupportedRows": "na",                optional: a gated row the subject leaves
 *                                               NULL is NA ("na", the default: a row not
 *                                               implemented yet) or makes it INVALID
 *       "config": "gate.json"                   optional: thresholds and the gated set
 *     },                                        (tandem gate --config format)
 *     "attempt": { "rounds": 3, "samples": 8, "timeout": 150,
 *                  "backends": ["aot", "jit"] } optional: the attempt's defaults
 *   }
 *
 * tl_project_load validates field by field: an unknown key, a wrong type, a number out of
 * range, a path that escapes its root or does not exist, a name that is not a C
 * identifier, a gate naming an unknown subject: each is an error "FILE: FIELD: reason".
 */
#ifndef TL_PROJECT_H
#define TL_PROJECT_H
#include <stddef.h>

#define TL_PROJECT_FILE "tandem.json"
#define TL_PROJECT_SCHEMA 1
#define TL_PROJECT_TANDEM_PREFIX "@tandem/"
#define TL_PROJECT_MAX 32      /* subjects, suites, peers, libs, backends each */

typedef struct tl_project_subject {
    char *name;
    char *folder;              /* absolute */
    char *link[TL_PROJECT_MAX]; /* the libraries linked with it: names or absolute paths */
    int nlink;
} tl_project_subject;

typedef struct tl_project_suite {
    char *name;
    char *folder;              /* absolute */
} tl_project_suite;

typedef struct tl_project {
    char *root;                /* absolute folder holding the project file */
    char *file;                /* absolute path of tandem.json */
    char *tandem_root;         /* Tandem's own source tree ("@tandem/") */
    char *name;
    /* the runtime part, absolute; port and contract NULL when absent */
    char *sources, *include, *port, *contract;
    tl_project_subject subjects[TL_PROJECT_MAX];
    int nsubjects;
    tl_project_suite suites[TL_PROJECT_MAX];
    int nsuites;
    char *smoke;               /* a suite name, or NULL */
    /* gate */
    char *gate_subject, *lower_bound, *gate_config;   /* gate_config NULL when absent */
    char *peers[TL_PROJECT_MAX];
    int npeers;
    char *gated_suites[TL_PROJECT_MAX];
    int ngated_suites;         /* 0: the gate's own default */
    int unsupported_invalid;   /* gate.unsupportedRows "invalid" (default "na": 0) */
    /* attempt defaults; 0 / NULL: the attempt's own default */
    int rounds, samples;
    double timeout;
    char *backends[TL_PROJECT_MAX];
    int nbackends;
} tl_project;

/* Load and validate DIR/tandem.json (or the file itself when `path` names a file).
 * tandem_root is Tandem's source tree for "@tandem/" paths. 0 ok, 1 error (reported). */
int tl_project_load(const char *path, const char *tandem_root, tl_project *p);
void tl_project_free(tl_project *p);

/* The project folder a verb works on: `given` (--project) when not NULL, else the
 * nearest folder from the current one upward holding tandem.json, else `fallback`
 * (Tandem's own tree). Returns a malloc'd absolute path, or NULL (reported). */
char *tl_project_locate(const char *given, const char *fallback);

/* tl_project_locate then tl_project_load: the project a verb works on. 0 ok, 1 error. */
int tl_project_open(const char *given, const char *tandem_root, tl_project *p);

/* "subject,other,..." into buf: the gate's subject first, then the other subjects in the
 * file's order (a verb's default subject list). */
void tl_project_subject_list(const tl_project *p, char *buf, size_t len);

/* The suites a measurement builds: every suite but the smoke suite and the demo suite
 * (`tandem demo`'s, suites.demo), in the file's order; NULL-terminated in out (max - 1 at
 * most). Returns how many. */
#define TL_PROJECT_DEMO_SUITE "demo"
int tl_project_measured_suites(const tl_project *p, const char **out, int max);

const tl_project_subject *tl_project_subject_find(const tl_project *p, const char *name);
const tl_project_suite *tl_project_suite_find(const tl_project *p, const char *name);

#endif
