/* att_safe.c - containment of `tandem attempt` (issue 18): its stop signals and child
 * subreaper, the names it turns into file names, and the emptiness of --out. */
#include "att.h"
#include "tl_safe.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

int att_contain(void)
{
    tl_catch_stop_signals();
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) return errno;
    return 0;
}

const char *att_signal_name(int sig, char *buf, size_t len)
{
    if (sig == SIGINT) return "SIGINT";
    if (sig == SIGTERM) return "SIGTERM";
    snprintf(buf, len, "signal %d", sig);
    return buf;
}

int att_name_ok(const char *s, size_t max, const char **why)
{
    size_t n = strlen(s);
    if (n == 0) { *why = "is empty"; return 0; }
    if (n > max) { *why = "is too long"; return 0; }
    if (s[0] == '.') { *why = "starts with '.'"; return 0; }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
                 c == '-';
        if (!ok) { *why = "holds a character other than letters, digits, '.', '_' and '-'"; return 0; }
    }
    return 1;
}

int att_out_empty(const char *dir, char *why, size_t len)
{
    struct stat st;
    if (lstat(dir, &st) != 0) { snprintf(why, len, "cannot read: %s", strerror(errno)); return -1; }
    if (S_ISLNK(st.st_mode)) { snprintf(why, len, "is a symbolic link: give the real folder"); return -1; }
    if (!S_ISDIR(st.st_mode)) { snprintf(why, len, "exists and is not a folder"); return -1; }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = fd < 0 ? NULL : fdopendir(fd);
    if (!d) {
        snprintf(why, len, "cannot list: %s", strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(why, len, "is not empty (it holds '%s'): an attempt folder is never overwritten", e->d_name);
        rc = -1;
        break;
    }
    closedir(d);
    return rc;
}
