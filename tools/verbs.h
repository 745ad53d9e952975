/*
 * verbs.h - the table of the `tandem` command's verbs (verbs.def), for main.c's dispatch
 * and for the verbs that describe the others (`tandem completion`).
 */
#ifndef TD_VERBS_H
#define TD_VERBS_H

#define TD_VERB(name, summary) int td_verb_##name(int argc, char **argv);
#include "verbs.def"
#undef TD_VERB

typedef struct td_verb_entry {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
} td_verb_entry;

/* Every verb in verbs.def order; ends with a NULL name. */
extern const td_verb_entry td_verbs[];

#endif
