/* shell.h - internals shared by the player shell's files. */
#ifndef TD_PLAYER_SHELL_H
#define TD_PLAYER_SHELL_H

#include "backend.h"
#include "tandem_player.h"

/* Process-wide allocation counters (alloc.c). */
void td_player_alloc_read(td_player_alloc_counts *out);
/* Live heap bytes (usable sizes of live blocks). */
int64_t td_player_alloc_live_bytes(void);
/* The interposed allocator, for binding into JIT modules. {NULL,NULL}-terminated. */
extern const td_backend_symbol td_player_alloc_symbols[];

#endif
