/*
 * tl_home.h - where Tandem's data is, and where a verb writes its results.
 *
 * Nothing of the source or build tree is compiled into the tools: an installed `tandem`
 * (PREFIX/bin) finds its data relative to its own executable, so the prefix can be moved or
 * copied, and the clone it was built from deleted.
 *
 * Tandem's home (the player ABI headers, the suites, the peers, the runtime as the default
 * project and its tandem.json; what "@tandem/" paths of a project name), the first of:
 *   1. $TANDEM_HOME;
 *   2. <folder of /proc/self/exe>/../share/tandem (an install: PREFIX/bin/tandem);
 *   3. <folder of /proc/self/exe>/tandem-home (the build tree: a link to the source tree
 *      that CMake writes beside build/tandem).
 * Each must hold tandem.json to count.
 *
 * A verb's results for a project (tl_home_work): under the project's own folder,
 * <project>/.tandem/, so that an outside project's attempts never land in Tandem's tree and
 * two users of one install never share a folder; Tandem's own project keeps its build folder
 * (<build>/) when the tool runs from a build tree, and in an install (whose home is not the
 * user's to write) uses $XDG_CACHE_HOME/tandem (default ~/.cache/tandem).
 */
#ifndef TL_HOME_H
#define TL_HOME_H

#define TL_HOME_ENV "TANDEM_HOME"
#define TL_HOME_WORK_DIR ".tandem"

/* Tandem's home (absolute, cached for the process), or NULL with an error printed naming
 * every place looked at. */
const char *tl_home(void);

/* The folder of the running executable (absolute, cached), or NULL. */
const char *tl_home_exe_dir(void);

/* The results folder of the project at project_root, with sub appended when not NULL
 * ("attempts", "inspect", "staging"). Not created. malloc'd; NULL when out of memory. */
char *tl_home_work(const char *project_root, const char *sub);

#endif
