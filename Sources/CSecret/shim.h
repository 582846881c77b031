#define SECRET_API_SUBJECT_TO_CHANGE 1 /* the D-Bus path calls (secret-paths.h) */
#include <libsecret/secret.h>
