#ifndef LATCHKEY_CSECRET_H
#define LATCHKEY_CSECRET_H

/*
 * libsecret, GIO and GLib as Latchkey calls them, loaded on first use.
 *
 * Nothing here includes a GLib or libsecret header, and nothing links them:
 * `latchkey_secret_load` opens libsecret-1.so.0 with dlopen (once per process,
 * thread-safe) and resolves every function below with dlsym on that handle,
 * which also finds the GLib, GObject and GIO symbols of its dependencies. Each
 * `lk_<name>` calls `<name>` through the resolved pointer; calling one before
 * `latchkey_secret_load` has returned 0 is a programmer error.
 *
 * The types are opaque except the three structs Latchkey reads (GError, GList,
 * GHashTableIter); the constants are the enum values Latchkey passes or compares.
 * scripts/check-csecret-header compiles Tests/CLatchkeySecretHeader/check.c against the
 * real headers (`pkg-config --cflags libsecret-1`) and static-asserts every
 * constant, every struct layout and every wrapper's signature against them;
 * `make test` runs it. Only the Internals/LibSecret*.swift and GIO.swift files
 * import this module.
 */

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The layouts of the GLib structs Latchkey reads or allocates (glib/gerror.h,
 * glib/glist.h, glib/ghash.h); checked against the real ones. */

/** GError: an error domain (a GQuark), a code in that domain, and a message. */
struct LKGErrorLayout {
    uint32_t domain;
    int code;
    char *message;
};

/** GList: one node of a doubly linked list. */
struct LKGListLayout {
    void *data;
    struct LKGListLayout *next;
    struct LKGListLayout *prev;
};

/** GHashTableIter: an iterator the caller allocates; its fields are private to GLib. */
struct LKGHashTableIterLayout {
    void *dummy1;
    void *dummy2;
    void *dummy3;
    int dummy4;
    int dummy5;
    void *dummy6;
};

#ifdef LATCHKEY_CSECRET_REAL_TYPES
/* Only for the header check, after the real headers: every type is the real
 * one, so the check can compare each wrapper's signature with the function it calls. */
typedef GError LKGError;
typedef GList LKGList;
typedef GHashTableIter LKGHashTableIter;
typedef GHashTable LKGHashTable;
typedef GVariant LKGVariant;
typedef GVariantType LKGVariantType;
typedef GVariantBuilder LKGVariantBuilder;
typedef GCancellable LKGCancellable;
typedef GDBusConnection LKGDBusConnection;
typedef GDBusProxy LKGDBusProxy;
typedef GDBusMessage LKGDBusMessage;
typedef GDBusAuthObserver LKGDBusAuthObserver;
typedef GMainContext LKGMainContext;
typedef GSource LKGSource;
typedef SecretService LKSecretService;
typedef SecretItem LKSecretItem;
typedef SecretSchema LKSecretSchema;
typedef SecretValue LKSecretValue;
typedef GDBusMethodInvocation LKGDBusMethodInvocation;
typedef GDBusNodeInfo LKGDBusNodeInfo;
typedef GDBusInterfaceInfo LKGDBusInterfaceInfo;
#else
typedef struct LKGErrorLayout LKGError;
typedef struct LKGListLayout LKGList;
typedef struct LKGHashTableIterLayout LKGHashTableIter;
typedef struct LKGHashTable LKGHashTable;
typedef struct LKGVariant LKGVariant;
typedef struct LKGVariantType LKGVariantType;
typedef struct LKGVariantBuilder LKGVariantBuilder;
typedef struct LKGCancellable LKGCancellable;
typedef struct LKGDBusConnection LKGDBusConnection;
typedef struct LKGDBusProxy LKGDBusProxy;
typedef struct LKGDBusMessage LKGDBusMessage;
typedef struct LKGDBusAuthObserver LKGDBusAuthObserver;
typedef struct LKGMainContext LKGMainContext;
typedef struct LKGSource LKGSource;
typedef struct LKSecretService LKSecretService;
typedef struct LKSecretItem LKSecretItem;
typedef struct LKSecretSchema LKSecretSchema;
typedef struct LKSecretValue LKSecretValue;
typedef struct LKGDBusMethodInvocation LKGDBusMethodInvocation;
typedef struct LKGDBusNodeInfo LKGDBusNodeInfo;
typedef struct LKGDBusInterfaceInfo LKGDBusInterfaceInfo;
#endif

/* Enum values (libsecret/secret-types.h, secret-service.h, secret-item.h,
 * secret-schema.h; gio/gioenums.h); checked against the real ones. */

/** SecretSearchFlags */
#define LK_SECRET_SEARCH_NONE 0u
#define LK_SECRET_SEARCH_ALL 2u
#define LK_SECRET_SEARCH_LOAD_SECRETS 8u
/** SecretServiceFlags */
#define LK_SECRET_SERVICE_OPEN_SESSION 2u
/** SecretItemCreateFlags */
#define LK_SECRET_ITEM_CREATE_NONE 0u
#define LK_SECRET_ITEM_CREATE_REPLACE 2u
/** SecretSchemaFlags */
#define LK_SECRET_SCHEMA_NONE 0u
/** SecretSchemaAttributeType */
#define LK_SECRET_SCHEMA_ATTRIBUTE_STRING 0u
/** GBusType */
#define LK_G_BUS_TYPE_SESSION 2
/** GDBusCallFlags */
#define LK_G_DBUS_CALL_FLAGS_NONE 0u
#define LK_G_DBUS_CALL_FLAGS_NO_AUTO_START 1u
/** GDBusSignalFlags */
#define LK_G_DBUS_SIGNAL_FLAGS_NONE 0u
/** GDBusMessageType */
#define LK_G_DBUS_MESSAGE_TYPE_SIGNAL 4
/** GDBusConnectionFlags */
#define LK_G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT 1u
#define LK_G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION 8u
/** GIOErrorEnum (domain g_io_error_quark) */
#define LK_G_IO_ERROR_CANCELLED 19
#define LK_G_IO_ERROR_TIMED_OUT 24
/** GDBusError (domain g_dbus_error_quark) */
#define LK_G_DBUS_ERROR_NO_REPLY 4
#define LK_G_DBUS_ERROR_TIMEOUT 12
#define LK_G_DBUS_ERROR_TIMED_OUT 20
/** SecretError (domain secret_error_get_quark) */
#define LK_SECRET_ERROR_IS_LOCKED 2
#define LK_SECRET_ERROR_NO_SUCH_OBJECT 3
/** GBusNameOwnerFlags */
#define LK_G_BUS_NAME_OWNER_FLAGS_NONE 0u
/** GDBusSubtreeFlags */
#define LK_G_DBUS_SUBTREE_FLAGS_DISPATCH_TO_UNENUMERATED_NODES 1u

/**
 * Opens libsecret-1.so.0 (dlopen, RTLD_NOW | RTLD_LOCAL) and resolves every
 * function below (dlsym), the first time it is called in the process; later
 * calls, from any thread, return the first call's result.
 *
 * Test seam, compiled only into a debug build made with LATCHKEY_TEST_SEAMS=1
 * in its environment (as make test builds): when the environment variable
 * LATCHKEY_LIBSECRET_PATH is set and not empty (and the process is not
 * set-user-ID: it is read with secure_getenv), that file is opened instead, so
 * a test can name a missing file to play a host without libsecret.
 *
 * @param message Receives, on failure, why (dlerror's text, such as
 *        "libsecret-1.so.0: cannot open shared object file: No such file or
 *        directory", or the function that was not found); may be NULL.
 * @param size The size of `message` in bytes.
 * @return 0 when libsecret is loaded, LK_SECRET_LOAD_NOT_FOUND when dlopen
 *         fails, LK_SECRET_LOAD_INCOMPLETE when a function is missing.
 */
int latchkey_secret_load(char *message, size_t size);

/** latchkey_secret_load's result when the library cannot be opened. */
#define LK_SECRET_LOAD_NOT_FOUND (-1)
/** latchkey_secret_load's result when the library lacks a function Latchkey calls. */
#define LK_SECRET_LOAD_INCOMPLETE (-2)

/* The wrappers, one per function Latchkey calls, each with the real function's
 * signature; the four GLib functions passed as function values (g_free,
 * g_str_hash, g_str_equal, g_object_unref) are passed as their wrappers. */

LKGDBusConnection *lk_g_bus_get_sync(int bus_type, LKGCancellable *cancellable, LKGError **error);
void lk_g_cancellable_cancel(LKGCancellable *cancellable);
int lk_g_cancellable_is_cancelled(LKGCancellable *cancellable);
LKGCancellable *lk_g_cancellable_new(void);
LKGSource *lk_g_cancellable_source_new(LKGCancellable *cancellable);
LKGVariant *lk_g_dbus_connection_call_sync(LKGDBusConnection *connection, const char *bus_name, const char *object_path,
                                           const char *interface_name, const char *method_name, LKGVariant *parameters,
                                           const LKGVariantType *reply_type, unsigned int flags, int timeout_msec,
                                           LKGCancellable *cancellable, LKGError **error);
int lk_g_dbus_connection_close_sync(LKGDBusConnection *connection, LKGCancellable *cancellable, LKGError **error);
LKGDBusConnection *lk_g_dbus_connection_new_for_address_sync(const char *address, unsigned int flags, LKGDBusAuthObserver *observer,
                                                             LKGCancellable *cancellable, LKGError **error);
uint32_t lk_g_dbus_error_quark(void);
unsigned int lk_g_dbus_connection_signal_subscribe(
    LKGDBusConnection *connection, const char *sender, const char *interface_name, const char *member, const char *object_path,
    const char *arg0, unsigned int flags,
    void (*callback)(LKGDBusConnection *connection, const char *sender_name, const char *object_path, const char *interface_name,
                     const char *signal_name, LKGVariant *parameters, void *user_data),
    void *user_data, void (*user_data_free_func)(void *data));
void lk_g_dbus_connection_signal_unsubscribe(LKGDBusConnection *connection, unsigned int subscription_id);
unsigned int lk_g_dbus_connection_add_filter(LKGDBusConnection *connection,
                                             LKGDBusMessage *(*filter_function)(LKGDBusConnection *connection, LKGDBusMessage *message,
                                                                                int incoming, void *user_data),
                                             void *user_data, void (*user_data_free_func)(void *data));
void lk_g_dbus_connection_remove_filter(LKGDBusConnection *connection, unsigned int filter_id);
const char *lk_g_dbus_message_get_arg0(LKGDBusMessage *message);
const char *lk_g_dbus_message_get_interface(LKGDBusMessage *message);
const char *lk_g_dbus_message_get_member(LKGDBusMessage *message);
unsigned int lk_g_dbus_message_get_message_type(LKGDBusMessage *message);
LKGDBusConnection *lk_g_dbus_proxy_get_connection(LKGDBusProxy *proxy);
void lk_g_error_free(LKGError *error);
void lk_g_free(void *mem);
int lk_g_hash_table_insert(LKGHashTable *hash_table, void *key, void *value);
void lk_g_hash_table_iter_init(LKGHashTableIter *iter, LKGHashTable *hash_table);
int lk_g_hash_table_iter_next(LKGHashTableIter *iter, void **key, void **value);
LKGHashTable *lk_g_hash_table_new_full(unsigned int (*hash_func)(const void *key), int (*key_equal_func)(const void *a, const void *b),
                                       void (*key_destroy_func)(void *data), void (*value_destroy_func)(void *data));
void lk_g_hash_table_unref(LKGHashTable *hash_table);
uint32_t lk_g_io_error_quark(void);
void lk_g_list_free_full(LKGList *list, void (*free_func)(void *data));
int lk_g_main_context_iteration(LKGMainContext *context, int may_block);
LKGMainContext *lk_g_main_context_new(void);
void lk_g_main_context_pop_thread_default(LKGMainContext *context);
void lk_g_main_context_push_thread_default(LKGMainContext *context);
void lk_g_main_context_unref(LKGMainContext *context);
void *lk_g_object_ref(void *object);
void lk_g_object_unref(void *object);
int lk_g_str_equal(const void *v1, const void *v2);
unsigned int lk_g_str_hash(const void *v);
char *lk_g_strdup(const char *str);
unsigned int lk_g_source_attach(LKGSource *source, LKGMainContext *context);
void lk_g_source_destroy(LKGSource *source);
void lk_g_source_set_callback(LKGSource *source, int (*func)(void *user_data), void *data, void (*notify)(void *data));
void lk_g_source_unref(LKGSource *source);
void lk_g_strfreev(char **str_array);
unsigned int lk_g_strv_length(char **str_array);
void lk_g_variant_builder_add_value(LKGVariantBuilder *builder, LKGVariant *value);
LKGVariant *lk_g_variant_builder_end(LKGVariantBuilder *builder);
LKGVariantBuilder *lk_g_variant_builder_new(const LKGVariantType *type);
void lk_g_variant_builder_unref(LKGVariantBuilder *builder);
int lk_g_variant_get_boolean(LKGVariant *value);
unsigned int lk_g_variant_get_uint32(LKGVariant *value);
LKGVariant *lk_g_variant_get_child_value(LKGVariant *value, size_t index_);
const char *lk_g_variant_get_string(LKGVariant *value, size_t *length);
LKGVariant *lk_g_variant_get_variant(LKGVariant *value);
size_t lk_g_variant_n_children(LKGVariant *value);
LKGVariant *lk_g_variant_new_dict_entry(LKGVariant *key, LKGVariant *value);
LKGVariant *lk_g_variant_new_object_path(const char *object_path);
LKGVariant *lk_g_variant_new_string(const char *string);
LKGVariant *lk_g_variant_new_tuple(LKGVariant *const *children, size_t n_children);
LKGVariant *lk_g_variant_new_variant(LKGVariant *value);
LKGVariant *lk_g_variant_ref_sink(LKGVariant *value);
void lk_g_variant_type_free(LKGVariantType *type);
LKGVariantType *lk_g_variant_type_new(const char *type_string);
void lk_g_variant_unref(LKGVariant *value);
uint32_t lk_secret_error_get_quark(void);
int lk_secret_item_delete_sync(LKSecretItem *self, LKGCancellable *cancellable, LKGError **error);
LKGHashTable *lk_secret_item_get_attributes(LKSecretItem *self);
char *lk_secret_item_get_label(LKSecretItem *self);
int lk_secret_item_get_locked(LKSecretItem *self);
LKSecretValue *lk_secret_item_get_secret(LKSecretItem *self);
int lk_secret_item_set_secret_sync(LKSecretItem *self, LKSecretValue *value, LKGCancellable *cancellable, LKGError **error);
void lk_secret_password_free(char *password);
char *lk_secret_password_lookupv_sync(const LKSecretSchema *schema, LKGHashTable *attributes, LKGCancellable *cancellable, LKGError **error);
LKSecretSchema *lk_secret_schema_newv(const char *name, unsigned int flags, LKGHashTable *attribute_names_and_types);
void lk_secret_schema_unref(LKSecretSchema *schema);
char *lk_secret_service_create_item_dbus_path_sync(LKSecretService *self, const char *collection_path, LKGHashTable *properties,
                                                   LKSecretValue *value, unsigned int flags, LKGCancellable *cancellable, LKGError **error);
LKGHashTable *lk_secret_service_get_secrets_for_dbus_paths_sync(LKSecretService *self, const char **item_paths,
                                                                LKGCancellable *cancellable, LKGError **error);
size_t lk_secret_service_get_type(void);
LKSecretService *lk_secret_service_open_sync(size_t service_gtype, const char *service_bus_name, unsigned int flags,
                                             LKGCancellable *cancellable, LKGError **error);
char *lk_secret_service_read_alias_dbus_path_sync(LKSecretService *self, const char *alias, LKGCancellable *cancellable, LKGError **error);
int lk_secret_service_search_for_dbus_paths_sync(LKSecretService *self, const LKSecretSchema *schema, LKGHashTable *attributes,
                                                 LKGCancellable *cancellable, char ***unlocked, char ***locked, LKGError **error);
LKGList *lk_secret_service_search_sync(LKSecretService *service, const LKSecretSchema *schema, LKGHashTable *attributes,
                                       unsigned int flags, LKGCancellable *cancellable, LKGError **error);
const char *lk_secret_value_get(LKSecretValue *value, size_t *length);
LKSecretValue *lk_secret_value_new(const char *secret, ssize_t length, const char *content_type);
void lk_secret_value_unref(void *value);

/* The Secret Service provider (LatchkeyProvider): GDBus's server side. provider.c holds the
 * two vtables GDBus calls (a subtree's and its interfaces'), each entry forwarding to the
 * handlers below; their layouts are checked against gio/gdbusconnection.h. */

/** GDBusInterfaceVTable's layout (three function pointers and eight of padding). */
struct LKGDBusInterfaceVTableLayout {
    void *method_call;
    void *get_property;
    void *set_property;
    void *padding[8];
};

/** GDBusSubtreeVTable's layout (three function pointers and eight of padding). */
struct LKGDBusSubtreeVTableLayout {
    void *enumerate;
    void *introspect;
    void *dispatch;
    void *padding[8];
};

#ifdef LATCHKEY_CSECRET_REAL_TYPES
typedef GDBusSubtreeVTable LKGDBusSubtreeVTable;
#else
typedef struct LKGDBusSubtreeVTableLayout LKGDBusSubtreeVTable;
#endif

/** What a provider subtree asks of its owner; `context` is the owner given at registration. */
struct lk_provider_handlers {
    /** A method call on `object_path`; the handler answers `invocation` (which it then owns) exactly once. */
    void (*method_call)(void *context, const char *sender, const char *object_path, const char *interface_name,
                        const char *method_name, LKGVariant *parameters, LKGDBusMethodInvocation *invocation);
    /** A property's value (floating or owned), or NULL with `*error` set. */
    LKGVariant *(*get_property)(void *context, const char *object_path, const char *interface_name,
                                const char *property_name, LKGError **error);
    /** Sets a property for the client `sender`: nonzero when set, else 0 with `*error` set. */
    int (*set_property)(void *context, const char *sender, const char *object_path, const char *interface_name, const char *property_name,
                        LKGVariant *value, LKGError **error);
    /** The interfaces `object_path` serves, as LK_PROVIDER_* bits (0: none). */
    unsigned int (*interfaces)(void *context, const char *object_path);
    /** The names of `object_path`'s children, newline-separated, in a string the caller frees with free(); NULL for none. */
    char *(*children)(void *context, const char *object_path);
};

/** The interface bits of lk_provider_handlers.interfaces. */
#define LK_PROVIDER_SERVICE 1u
#define LK_PROVIDER_COLLECTION 2u
#define LK_PROVIDER_ITEM 4u
#define LK_PROVIDER_SESSION 8u
#define LK_PROVIDER_PROMPT 16u
#define LK_PROVIDER_LATCHKEY 32u

/**
 * Calls `fire(data)` once on `context`'s thread when `cancellable` is cancelled (from any
 * thread): a g_cancellable_source_new source attached to `context`. `release(data)` is called
 * when the source is gone. Returns 0, or -1 when out of memory (nothing attached; `release` not called).
 */
int latchkey_provider_attach_wake(LKGMainContext *context, LKGCancellable *cancellable, void (*fire)(void *data), void *data,
                                  void (*release)(void *data));

/**
 * Parses the provider's introspection XML once (g_dbus_node_info_new_for_xml), the interfaces
 * org.freedesktop.Secret.Service, .Collection, .Item, .Session and .Prompt, and Latchkey's own
 * io.github.latchkey.SecretService; later calls return 0 at once.
 * Call with latchkey_secret_load done. Returns 0, or -1 with `*error` set.
 */
int latchkey_provider_load_interfaces(const char *xml, LKGError **error);

/**
 * Registers a subtree at `object_path` on `connection` (g_dbus_connection_register_subtree,
 * dispatching to unenumerated nodes too), whose root and children are served through `handlers`
 * with `context`; calls arrive on the thread-default main context of the calling thread.
 * Returns the registration id, or 0 with `*error` set.
 */
unsigned int latchkey_provider_register(LKGDBusConnection *connection, const char *object_path,
                                        const struct lk_provider_handlers *handlers, void *context, LKGError **error);

char *lk_g_dbus_address_get_for_bus_sync(int bus_type, LKGCancellable *cancellable, LKGError **error);
unsigned int lk_g_bus_own_name_on_connection(LKGDBusConnection *connection, const char *name, unsigned int flags,
                                             void (*name_acquired_handler)(LKGDBusConnection *connection, const char *name,
                                                                           void *user_data),
                                             void (*name_lost_handler)(LKGDBusConnection *connection, const char *name,
                                                                       void *user_data),
                                             void *user_data, void (*user_data_free_func)(void *data));
int lk_g_dbus_connection_emit_signal(LKGDBusConnection *connection, const char *destination_bus_name, const char *object_path,
                                     const char *interface_name, const char *signal_name, LKGVariant *parameters, LKGError **error);
unsigned int lk_g_dbus_connection_register_subtree(LKGDBusConnection *connection, const char *object_path,
                                                   const LKGDBusSubtreeVTable *vtable, unsigned int flags,
                                                   void *user_data, void (*user_data_free_func)(void *data), LKGError **error);
int lk_g_dbus_connection_unregister_subtree(LKGDBusConnection *connection, unsigned int registration_id);
LKGError *lk_g_dbus_error_new_for_dbus_error(const char *dbus_error_name, const char *dbus_error_message);
LKGDBusInterfaceInfo *lk_g_dbus_interface_info_ref(LKGDBusInterfaceInfo *info);
void lk_g_dbus_method_invocation_return_dbus_error(LKGDBusMethodInvocation *invocation, const char *error_name,
                                                   const char *error_message);
void lk_g_dbus_method_invocation_return_value(LKGDBusMethodInvocation *invocation, LKGVariant *parameters);
LKGDBusInterfaceInfo *lk_g_dbus_node_info_lookup_interface(LKGDBusNodeInfo *info, const char *name);
LKGDBusNodeInfo *lk_g_dbus_node_info_new_for_xml(const char *xml_data, LKGError **error);
void *lk_g_memdup2(const void *mem, size_t byte_size);
char **lk_g_strsplit(const char *string, const char *delimiter, int max_tokens);
LKGVariant *lk_g_variant_new_boolean(int value);
LKGVariant *lk_g_variant_new_fixed_array(const LKGVariantType *element_type, const void *elements, size_t n_elements,
                                         size_t element_size);
LKGVariant *lk_g_variant_new_uint64(uint64_t value);
const void *lk_g_variant_get_fixed_array(LKGVariant *value, size_t *n_elements, size_t element_size);
const char *lk_g_variant_get_type_string(LKGVariant *value);

#ifdef __cplusplus
}
#endif

#endif
