/*
 * The Secret Service provider's side of GDBus (CLatchkeySecret.h, "The Secret Service provider"):
 * the subtree and interface vtables GDBus calls, each entry forwarding to the provider's
 * handlers (Swift, in LatchkeyProvider), and the interfaces parsed from its introspection XML.
 * Every GLib call goes through the lk_ wrappers of loader.c.
 */
#include "CLatchkeySecret.h"

#include <stdlib.h>
#include <string.h>

/** The parsed introspection data; set once, on the provider's thread, and kept for the process. */
static LKGDBusNodeInfo *lk_provider_node;
/** The interfaces, in the order of the LK_PROVIDER_* bits. */
#define LK_PROVIDER_INTERFACE_COUNT 6
static LKGDBusInterfaceInfo *lk_provider_interfaces[LK_PROVIDER_INTERFACE_COUNT];
static const char *const lk_provider_interface_names[LK_PROVIDER_INTERFACE_COUNT] = {
    "org.freedesktop.Secret.Service", "org.freedesktop.Secret.Collection", "org.freedesktop.Secret.Item",
    "org.freedesktop.Secret.Session", "org.freedesktop.Secret.Prompt",    "io.github.latchkey.SecretService",
};

/** What one registration serves: the owner's handlers and context (freed with the registration). */
struct lk_provider_registration {
    struct lk_provider_handlers handlers;
    void *context;
    char *path;
};

int latchkey_provider_load_interfaces(const char *xml, LKGError **error) {
    if (lk_provider_node != NULL) {
        return 0;
    }
    LKGDBusNodeInfo *node = lk_g_dbus_node_info_new_for_xml(xml, error);
    if (node == NULL) {
        return -1;
    }
    for (int index = 0; index < LK_PROVIDER_INTERFACE_COUNT; index++) {
        lk_provider_interfaces[index] = lk_g_dbus_node_info_lookup_interface(node, lk_provider_interface_names[index]);
        if (lk_provider_interfaces[index] == NULL) {
            *error = lk_g_dbus_error_new_for_dbus_error("org.freedesktop.DBus.Error.Failed",
                                                         "the provider's introspection data lacks an interface");
            return -1;
        }
    }
    lk_provider_node = node;
    return 0;
}

/** The full path of `node` below the registration's path (node NULL: the root), allocated. */
static char *lk_provider_path(const struct lk_provider_registration *registration, const char *node) {
    size_t base = strlen(registration->path);
    size_t extra = node != NULL ? strlen(node) + 1 : 0;
    char *path = malloc(base + extra + 1);
    if (path == NULL) {
        return NULL;
    }
    memcpy(path, registration->path, base);
    if (node != NULL) {
        path[base] = '/';
        memcpy(path + base + 1, node, extra - 1);
    }
    path[base + extra] = '\0';
    return path;
}

static void lk_provider_method_call(LKGDBusConnection *connection, const char *sender, const char *object_path,
                                    const char *interface_name, const char *method_name, LKGVariant *parameters,
                                    LKGDBusMethodInvocation *invocation, void *user_data) {
    (void)connection;
    struct lk_provider_registration *registration = user_data;
    registration->handlers.method_call(registration->context, sender, object_path, interface_name, method_name, parameters,
                                       invocation);
}

static LKGVariant *lk_provider_get_property(LKGDBusConnection *connection, const char *sender, const char *object_path,
                                            const char *interface_name, const char *property_name, LKGError **error,
                                            void *user_data) {
    (void)connection;
    (void)sender;
    struct lk_provider_registration *registration = user_data;
    return registration->handlers.get_property(registration->context, object_path, interface_name, property_name, error);
}

static int lk_provider_set_property(LKGDBusConnection *connection, const char *sender, const char *object_path,
                                    const char *interface_name, const char *property_name, LKGVariant *value, LKGError **error,
                                    void *user_data) {
    (void)connection;
    struct lk_provider_registration *registration = user_data;
    return registration->handlers.set_property(registration->context, sender, object_path, interface_name, property_name, value,
                                               error);
}

static const struct LKGDBusInterfaceVTableLayout lk_provider_interface_vtable = {
    .method_call = (void *)lk_provider_method_call,
    .get_property = (void *)lk_provider_get_property,
    .set_property = (void *)lk_provider_set_property,
};

static char **lk_provider_enumerate(LKGDBusConnection *connection, const char *sender, const char *object_path,
                                    void *user_data) {
    (void)connection;
    (void)sender;
    (void)object_path;
    struct lk_provider_registration *registration = user_data;
    char *names = registration->handlers.children(registration->context, registration->path);
    char **result = lk_g_strsplit(names != NULL ? names : "", "\n", -1);
    free(names);
    return result;
}

static LKGDBusInterfaceInfo **lk_provider_introspect(LKGDBusConnection *connection, const char *sender, const char *object_path,
                                                     const char *node, void *user_data) {
    (void)connection;
    (void)sender;
    (void)object_path;
    struct lk_provider_registration *registration = user_data;
    char *path = lk_provider_path(registration, node);
    if (path == NULL) {
        return NULL;
    }
    unsigned int bits = registration->handlers.interfaces(registration->context, path);
    free(path);
    LKGDBusInterfaceInfo *found[LK_PROVIDER_INTERFACE_COUNT + 1] = {NULL};
    size_t count = 0;
    for (int index = 0; index < LK_PROVIDER_INTERFACE_COUNT; index++) {
        if (bits & (1u << index)) {
            found[count++] = lk_g_dbus_interface_info_ref(lk_provider_interfaces[index]);
        }
    }
    if (count == 0) {
        return NULL;
    }
    return lk_g_memdup2(found, (count + 1) * sizeof found[0]);
}

static const struct LKGDBusInterfaceVTableLayout *lk_provider_dispatch(LKGDBusConnection *connection, const char *sender,
                                                                       const char *object_path, const char *interface_name,
                                                                       const char *node, void **out_user_data,
                                                                       void *user_data) {
    (void)connection;
    (void)sender;
    (void)object_path;
    (void)interface_name;
    (void)node;
    *out_user_data = user_data;
    return &lk_provider_interface_vtable;
}

static const struct LKGDBusSubtreeVTableLayout lk_provider_subtree_vtable = {
    .enumerate = (void *)lk_provider_enumerate,
    .introspect = (void *)lk_provider_introspect,
    .dispatch = (void *)lk_provider_dispatch,
};

static void lk_provider_registration_free(void *data) {
    struct lk_provider_registration *registration = data;
    free(registration->path);
    free(registration);
}

unsigned int latchkey_provider_register(LKGDBusConnection *connection, const char *object_path,
                                        const struct lk_provider_handlers *handlers, void *context, LKGError **error) {
    struct lk_provider_registration *registration = calloc(1, sizeof *registration);
    char *path = strdup(object_path);
    if (registration == NULL || path == NULL) {
        free(registration);
        free(path);
        *error = lk_g_dbus_error_new_for_dbus_error("org.freedesktop.DBus.Error.NoMemory", "out of memory");
        return 0;
    }
    registration->handlers = *handlers;
    registration->context = context;
    registration->path = path;
    return lk_g_dbus_connection_register_subtree(connection, object_path, &lk_provider_subtree_vtable,
                                                 LK_G_DBUS_SUBTREE_FLAGS_DISPATCH_TO_UNENUMERATED_NODES, registration,
                                                 lk_provider_registration_free, error);
}

/** What a wake source calls, and with what; freed with the source. */
struct lk_provider_wake {
    void (*fire)(void *data);
    void *data;
    void (*release)(void *data);
};

/** The GCancellableSourceFunc of a wake source: calls `fire` once (G_SOURCE_REMOVE). */
static int lk_provider_wake_fired(void *cancellable, void *user_data) {
    (void)cancellable;
    struct lk_provider_wake *wake = user_data;
    wake->fire(wake->data);
    return 0;
}

static void lk_provider_wake_free(void *user_data) {
    struct lk_provider_wake *wake = user_data;
    wake->release(wake->data);
    free(wake);
}

int latchkey_provider_attach_wake(LKGMainContext *context, LKGCancellable *cancellable, void (*fire)(void *data), void *data,
                                  void (*release)(void *data)) {
    struct lk_provider_wake *wake = malloc(sizeof *wake);
    if (wake == NULL) {
        return -1;
    }
    wake->fire = fire;
    wake->data = data;
    wake->release = release;
    LKGSource *source = lk_g_cancellable_source_new(cancellable);
    lk_g_source_set_callback(source, (int (*)(void *))(void (*)(void))lk_provider_wake_fired, wake, lk_provider_wake_free);
    lk_g_source_attach(source, context);
    lk_g_source_unref(source);
    return 0;
}
