#ifndef LATCHKEY_CLINUX_SHIM_H
#define LATCHKEY_CLINUX_SHIM_H

/* Linux calls Swift cannot make directly (prctl is variadic) or sees only under
   _GNU_SOURCE. Called only from
   Sources/Latchkey/Internals/POSIX/ and Sources/LatchkeySystem/Internals/Glibc.swift. */

#include <sys/prctl.h>
#include <sys/socket.h>
#include <spawn.h>
#include <string.h>

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

/* pipe(2) with flags (O_CLOEXEC), so no other thread's child inherits the pipe. */
extern int pipe2(int descriptors[2], int flags);

/* The spawned child closes every descriptor from `from` up. */
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);

/* Sets `attributes` so the spawned child starts with no signal blocked and with the
   default action for SIGHUP, SIGINT, SIGQUIT and SIGTERM (and SIGPIPE when
   `default_pipe` is not 0), whatever the parent blocks or ignores (a test runner's
   threads block SIGTERM), plus `flags` (POSIX_SPAWN_SETPGROUP,
   LATCHKEY_POSIX_SPAWN_SETSID). Returns 0, or an error number. */
#include <signal.h>
static inline int latchkey_spawnattr_reset_signals(posix_spawnattr_t *attributes, short flags, int default_pipe) {
    sigset_t none, defaults;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(attributes, &none);
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGHUP);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGQUIT);
    sigaddset(&defaults, SIGTERM);
    if (default_pipe) sigaddset(&defaults, SIGPIPE);
    posix_spawnattr_setsigdefault(attributes, &defaults);
    return posix_spawnattr_setflags(attributes, (short)(flags | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF));
}

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

/* recvmsg(2) of at most `length` bytes without waiting (MSG_DONTWAIT); descriptors
   that came with them (SCM_RIGHTS, close-on-exec) are stored in `descriptors`, up to
   `capacity` (4 at most; any beyond are closed), and their number in `received`.
   Returns the bytes read, or -1 with errno set. */
static inline long latchkey_receive_descriptors(
    int socket, void *bytes, unsigned long length, int *descriptors, int capacity, int *received) {
    union { struct cmsghdr header; char space[CMSG_SPACE(8 * sizeof(int))]; } control;
    struct iovec vector = { bytes, length };
    struct msghdr message;
    memset(&message, 0, sizeof message);
    message.msg_iov = &vector;
    message.msg_iovlen = 1;
    message.msg_control = control.space;
    message.msg_controllen = sizeof control.space;
    *received = 0;
    long count = (long)recvmsg(socket, &message, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (count < 0) return -1;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
        int n = (int)((header->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        int *passed = (int *)CMSG_DATA(header);
        for (int index = 0; index < n; index++) {
            if (*received < capacity && *received < 4) descriptors[(*received)++] = passed[index];
            else close(passed[index]);
        }
    }
    return count;
}

#endif
