/* inspect_auto.h - the inputs of a bare `tandem inspect` (inspect_auto.c). */
#ifndef TD_INSPECT_AUTO_H
#define TD_INSPECT_AUTO_H

#define TI_AUTO_MAX_INC 8

typedef struct ti_auto {
    char *work, *staging, *players;     /* the work folder (<build>/inspect, or a project's under
                                           it), its staging/ and aot/ */
    char *project;                      /* the project's tandem.json */
    char *subject;                      /* its gate subject: the player built and inspected */
    char *contract, *tu, *ir, *remarks; /* the staged contract; the player's TU, IR, remarks */
    char *out;                          /* <work>/report */
    char *inc[TI_AUTO_MAX_INC];         /* the include paths the backends use */
    int ninc;
} ti_auto;

/* The project (`project`, else the nearest tandem.json upward, else Tandem's own): stage
 * it, build or reuse the AOT player of its gate subject, fill a. contract_given: --contract
 * names the contract (else the project's, runtime.contract, staged as runtime/contract.json;
 * a project that names none is refused before anything is staged, saying so).
 * 0 ok; 1 refused or a step failed (reported). a is always valid for ti_auto_free. */
int ti_auto_prepare(ti_auto *a, const char *project, int contract_given);
void ti_auto_free(ti_auto *a);

#endif
