#ifndef EXTERNAL_APP_PROBE_H
#define EXTERNAL_APP_PROBE_H

/* prctl(PR_GET_DUMPABLE): 1 when the process is dumpable, 0 when not, -1 on error. */
int probe_dumpable(void);

#endif
