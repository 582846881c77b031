/*
 * Checks Sources/CLatchkeySecret/include/CLatchkeySecret.h against the real libsecret, GIO and
 * GLib headers at compile time: every constant, the three struct layouts, and
 * every wrapper's signature against the function it calls. Compiling is the
 * test; scripts/check-csecret-header does it (`make test` runs that first).
 */
#define SECRET_API_SUBJECT_TO_CHANGE 1
/* G_GNUC_CONST (__attribute__((const)), on libsecret's quark and get_type
 * functions) is part of a function's type for __builtin_types_compatible_p but
 * not of its ABI, so the signature checks below read libsecret's headers without it. */
#include <glib.h>
#undef G_GNUC_CONST
#define G_GNUC_CONST
#include <libsecret/secret.h>

#define LATCHKEY_CSECRET_REAL_TYPES 1
#include "CLatchkeySecret.h"
#include "functions.h"

#include <stddef.h>

#define SAME(mine, real) _Static_assert((mine) == (real), #mine " differs from " #real)

SAME(LK_SECRET_SEARCH_NONE, SECRET_SEARCH_NONE);
SAME(LK_SECRET_SEARCH_ALL, SECRET_SEARCH_ALL);
SAME(LK_SECRET_SEARCH_LOAD_SECRETS, SECRET_SEARCH_LOAD_SECRETS);
SAME(LK_SECRET_SERVICE_OPEN_SESSION, SECRET_SERVICE_OPEN_SESSION);
SAME(LK_SECRET_ITEM_CREATE_NONE, SECRET_ITEM_CREATE_NONE);
SAME(LK_SECRET_ITEM_CREATE_REPLACE, SECRET_ITEM_CREATE_REPLACE);
SAME(LK_SECRET_SCHEMA_NONE, SECRET_SCHEMA_NONE);
SAME(LK_SECRET_SCHEMA_ATTRIBUTE_STRING, SECRET_SCHEMA_ATTRIBUTE_STRING);
SAME(LK_G_BUS_TYPE_SESSION, G_BUS_TYPE_SESSION);
SAME(LK_G_DBUS_CALL_FLAGS_NONE, G_DBUS_CALL_FLAGS_NONE);
SAME(LK_G_DBUS_CALL_FLAGS_NO_AUTO_START, G_DBUS_CALL_FLAGS_NO_AUTO_START);
SAME(LK_G_DBUS_SIGNAL_FLAGS_NONE, G_DBUS_SIGNAL_FLAGS_NONE);
SAME(LK_G_DBUS_MESSAGE_TYPE_SIGNAL, G_DBUS_MESSAGE_TYPE_SIGNAL);
SAME(LK_G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT, G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT);
SAME(LK_G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION, G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION);
SAME(LK_G_IO_ERROR_CANCELLED, G_IO_ERROR_CANCELLED);
SAME(LK_G_IO_ERROR_TIMED_OUT, G_IO_ERROR_TIMED_OUT);
SAME(LK_G_DBUS_ERROR_NO_REPLY, G_DBUS_ERROR_NO_REPLY);
SAME(LK_G_DBUS_ERROR_TIMEOUT, G_DBUS_ERROR_TIMEOUT);
SAME(LK_G_DBUS_ERROR_TIMED_OUT, G_DBUS_ERROR_TIMED_OUT);
SAME(LK_SECRET_ERROR_IS_LOCKED, SECRET_ERROR_IS_LOCKED);
SAME(LK_SECRET_ERROR_NO_SUCH_OBJECT, SECRET_ERROR_NO_SUCH_OBJECT);
SAME(LK_G_BUS_NAME_OWNER_FLAGS_NONE, G_BUS_NAME_OWNER_FLAGS_NONE);
SAME(LK_G_DBUS_SUBTREE_FLAGS_DISPATCH_TO_UNENUMERATED_NODES, G_DBUS_SUBTREE_FLAGS_DISPATCH_TO_UNENUMERATED_NODES);

#define SAME_SIZE(mine, real) _Static_assert(sizeof(mine) == sizeof(real), "the size of " #mine " differs from " #real)
#define SAME_FIELD(mine, real, field)                                                        \
    _Static_assert(offsetof(mine, field) == offsetof(real, field)                             \
                       && sizeof(((mine *)0)->field) == sizeof(((real *)0)->field),           \
                   #mine "." #field " differs from " #real "." #field)

SAME_SIZE(struct LKGErrorLayout, GError);
SAME_FIELD(struct LKGErrorLayout, GError, domain);
SAME_FIELD(struct LKGErrorLayout, GError, code);
SAME_FIELD(struct LKGErrorLayout, GError, message);
SAME_SIZE(struct LKGListLayout, GList);
SAME_FIELD(struct LKGListLayout, GList, data);
SAME_FIELD(struct LKGListLayout, GList, next);
SAME_FIELD(struct LKGListLayout, GList, prev);
SAME_SIZE(struct LKGHashTableIterLayout, GHashTableIter);
_Static_assert(_Alignof(struct LKGHashTableIterLayout) == _Alignof(GHashTableIter), "GHashTableIter's alignment differs");
/* GHashTableIter's fields are private; its size and alignment are what a caller's copy needs. */
SAME_SIZE(struct LKGDBusInterfaceVTableLayout, GDBusInterfaceVTable);
SAME_FIELD(struct LKGDBusInterfaceVTableLayout, GDBusInterfaceVTable, method_call);
SAME_FIELD(struct LKGDBusInterfaceVTableLayout, GDBusInterfaceVTable, get_property);
SAME_FIELD(struct LKGDBusInterfaceVTableLayout, GDBusInterfaceVTable, set_property);
SAME_FIELD(struct LKGDBusInterfaceVTableLayout, GDBusInterfaceVTable, padding);
SAME_SIZE(struct LKGDBusSubtreeVTableLayout, GDBusSubtreeVTable);
SAME_FIELD(struct LKGDBusSubtreeVTableLayout, GDBusSubtreeVTable, enumerate);
SAME_FIELD(struct LKGDBusSubtreeVTableLayout, GDBusSubtreeVTable, introspect);
SAME_FIELD(struct LKGDBusSubtreeVTableLayout, GDBusSubtreeVTable, dispatch);
SAME_FIELD(struct LKGDBusSubtreeVTableLayout, GDBusSubtreeVTable, padding);

/* With the real types in place, each wrapper must have exactly the signature of
 * the function it calls (enums count as their unsigned int). */
#define SAME_SIGNATURE(name) \
    _Static_assert(__builtin_types_compatible_p(__typeof__(&lk_##name), __typeof__(&(name))), "lk_" #name " differs from " #name);
LK_EACH_FUNCTION(SAME_SIGNATURE)

int main(void) {
    return 0;
}
