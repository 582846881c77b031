#ifndef LATCHKEY_CLINUX_SHIM_H
#define LATCHKEY_CLINUX_SHIM_H

/* Linux calls Swift cannot make directly (prctl is variadic) or sees only under
   _GNU_SOURCE. Called only from
   Sources/Latchkey/Internals/POSIX/ and the Internals/Glibc.swift of LatchkeyAgent. */

#include <sys/prctl.h>
#include <sys/socket.h>
#include <spawn.h>

/* prctl(PR_SET_DUMPABLE, dumpable): 0 makes the process not dumpable (no core
   dump; other processes of the user cannot ptrace it or read its memory);
   1 restores the default. Returns 0, or -1 with errno set. */
static inline int latchkey_set_dumpable(int dumpable) {
    return prctl(PR_SET_DUMPABLE, (unsigned long)dumpable, 0UL, 0UL, 0UL);
}

/* prctl(PR_GET_DUMPABLE): 1 when dumpable, 0 when not (2 for root-only dumps),
   -1 with errno set. */
static inline int latchkey_get_dumpable(void) {
    return prctl(PR_GET_DUMPABLE, 0UL, 0UL, 0UL, 0UL);
}

/* What glibc declares only under _GNU_SOURCE, declared here as glibc 2.34 and
   later define it. */

/* posix_spawnattr_setflags flag: the child calls setsid. */
#define LATCHKEY_POSIX_SPAWN_SETSID 0x80

/* The spawned child closes every descriptor from `from` up. */
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);

/* Closes every descriptor from `first` up (close_range(2), Linux 5.9; on an older
   kernel, one close per descriptor up to the limit). Returns 0. */
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/resource.h>
static inline int latchkey_close_from(unsigned int first) {
    if (syscall(436 /* SYS_close_range */, first, ~0U, 0) == 0) return 0;
    struct rlimit limit;
    long last = getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY ? (long)limit.rlim_cur : 65536;
    for (long descriptor = first; descriptor < last; descriptor++) close((int)descriptor);
    return 0;
}

/* The pid and uid of the process at the other end of a Unix socket (SO_PEERCRED,
   whose struct ucred is pid, uid, gid), as the kernel recorded them at connect.
   Returns 0, or -1 with errno set. */
static inline int latchkey_peer_credentials(int descriptor, int *pid, unsigned int *uid) {
    struct { int pid; unsigned int uid; unsigned int gid; } credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(descriptor, SOL_SOCKET, 17 /* SO_PEERCRED */, &credentials, &length) != 0) return -1;
    *pid = credentials.pid;
    *uid = credentials.uid;
    return 0;
}

#endif
