#include <sys/prctl.h>

#include "probe.h"

int probe_dumpable(void) { return prctl(PR_GET_DUMPABLE, 0UL, 0UL, 0UL, 0UL); }
