/*
 * main.c - the `tandem` command: dispatches `tandem <verb> [options]` to a verb.
 * The verb list lives in verbs.def so that adding a verb touches one line here.
 */
#include <stdio.h>
#include <string.h>

#include "tl_opt.h"
#include "verbs.h"

const td_verb_entry td_verbs[] = {
#define TD_VERB(name, summary) { #name, summary, td_verb_##name },
#include "verbs.def"
#undef TD_VERB
    { NULL, NULL, NULL }
};

static void print_usage(FILE *out)
{
    fprintf(out, "usage: tandem <verb> [options]   (tandem <verb> --help for a verb's options)\n"
                "       tandem --version\n\nverbs:\n");
    for (const td_verb_entry *v = td_verbs; v->name; v++)
        fprintf(out, "  %-10s %s\n", v->name, v->summary);
    fprintf(out, "\nexit codes: 0 pass, 1 invalid or aborted, 2 usage, 3 gate or contract fail\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        print_usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version"))
        return td_verb_version(argc - 1, argv + 1);
    for (const td_verb_entry *v = td_verbs; v->name; v++)
        if (!strcmp(argv[1], v->name))
            return v->run(argc - 1, argv + 1);
    const char *names[64], *near;
    size_t n = 0;
    for (const td_verb_entry *v = td_verbs; v->name && n < 64; v++) names[n++] = v->name;
    near = tl_opt_nearest(argv[1], strlen(argv[1]), names, n);
    if (near) fprintf(stderr, "tandem: unknown verb '%s': did you mean %s?\n", argv[1], near);
    else fprintf(stderr, "tandem: unknown verb '%s'\n", argv[1]);
    print_usage(stderr);
    return 2;
}
