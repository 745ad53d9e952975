/*
 * td_layout.h - where the generated unit's sources start (backends/common.c td_tu_generate
 * includes this first and puts TD_LAYOUT_FILE_START(lines, id) before each source it
 * includes). A seeded build (tandem build --layout-seed, tandem-player --layout-seed for the
 * JIT) gives each source a pad of `lines` cache lines (0..63) so that the same code lands at
 * other addresses: the baseline comparison reads a time ratio across such layouts (issue 42).
 * A pad is never executed: the instructions of every row stay the same. Lines 0 is the
 * default layout.
 *
 * Here and not in runtime/port: the unit of every subject includes it, and a baseline
 * revision's or a project's own port layer (tandem.json runtime.port) does not have it,
 * while players/include is always this tree's (tools/baseline/baseline.c,
 * tools/stage/stage_project.c).
 *
 *   tcc    aligns no function (not even with __attribute__((aligned))), but its assembler
 *          honours file-scope asm in order: the next source's code starts on a 64-byte line
 *          (a change in one file does not move another file's code within its cache lines),
 *          after `lines` lines of padding.
 *   clang  aligns every function and loop itself (backends/aot/aot.c); module-level asm goes
 *          to the start of the file, not between functions, so the pad is a function that
 *          nothing calls, `used` so that it stays, of `lines` lines; none for 0 lines.
 */
#ifndef TD_LAYOUT_H
#define TD_LAYOUT_H

#define TD_LAYOUT_STR_(x) #x
#define TD_LAYOUT_STR(x) TD_LAYOUT_STR_(x)

#ifdef __TINYC__
#define TD_LAYOUT_FILE_START(lines, id) __asm__(".p2align 6\n.skip " TD_LAYOUT_STR(lines) "*64");
#else
/* TD_LAYOUT_NONZERO(lines): 0 for the literal 0, else 1 (TD_LAYOUT_ZERO_0 adds an argument) */
#define TD_LAYOUT_ZERO_0 ~, 0
#define TD_LAYOUT_SECOND(a, b, ...) b
#define TD_LAYOUT_SECOND_(...) TD_LAYOUT_SECOND(__VA_ARGS__)
#define TD_LAYOUT_NONZERO(lines) TD_LAYOUT_SECOND_(TD_LAYOUT_ZERO_##lines, 1, ~)
#define TD_LAYOUT_CAT_(a, b) a##b
#define TD_LAYOUT_CAT(a, b) TD_LAYOUT_CAT_(a, b)
#define TD_LAYOUT_PAD_0(lines, id)
#define TD_LAYOUT_PAD_1(lines, id)                                                          \
    __attribute__((used, noinline, visibility("hidden"))) void td_layout_pad_##id(void);     \
    void td_layout_pad_##id(void) { __asm__ volatile(".skip " TD_LAYOUT_STR(lines) "*64"); }
#define TD_LAYOUT_FILE_START(lines, id) TD_LAYOUT_CAT(TD_LAYOUT_PAD_, TD_LAYOUT_NONZERO(lines))(lines, id)
#endif

#endif
