/* inspect_auto.h - the inputs of a bare `tandem inspect` (inspect_auto.c). */
#ifndef TD_INSPECT_AUTO_H
#define TD_INSPECT_AUTO_H

#define TI_AUTO_MAX_INC 8

typedef struct ti_auto {
    char *work, *staging, *players;     /* <build>/inspect, its staging/ and aot/ */
    char *contract, *tu, *ir, *remarks; /* the staged contract; the player's TU, IR, remarks */
    char *out;                          /* <build>/inspect/report */
    char *inc[TI_AUTO_MAX_INC];         /* the include paths the backends use */
    int ninc;
} ti_auto;

/* Stage the working tree, build or reuse the AOT player of subject tandem, fill a.
 * 0 ok; 1 a step failed (reported). a is always valid for ti_auto_free. */
int ti_auto_prepare(ti_auto *a);
void ti_auto_free(ti_auto *a);

#endif
