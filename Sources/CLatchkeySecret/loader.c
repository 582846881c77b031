/*
 * Loads libsecret on first use and calls it through the pointers dlsym found
 * (see include/CLatchkeySecret.h). The only file that names dlopen.
 */
#define _GNU_SOURCE /* secure_getenv */
#include "CLatchkeySecret.h"
#include "functions.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/** The library opened when the test seam is not set. */
static const char lk_default_library[] = "libsecret-1.so.0";

/** One pointer per wrapped function, of its wrapper's type, filled once by lk_load. */
struct lk_functions {
#define LK_FIELD(name) __typeof__(&lk_##name) name;
    LK_EACH_FUNCTION(LK_FIELD)
#undef LK_FIELD
};

/** The resolved functions; written only inside pthread_once, read after it. */
static struct lk_functions lk_table;
/** 0 once every function is resolved; before, and after a failure, why not. */
static int lk_status = LK_SECRET_LOAD_NOT_FOUND;
/** Why loading failed, when it did. */
static char lk_failure[512];
/** Runs lk_load once per process. */
static pthread_once_t lk_once = PTHREAD_ONCE_INIT;

/**
 * Opens the library and resolves every function into a local table, copied
 * into lk_table only when all were found. A handle is never closed, even after
 * a failed lookup: GLib's constructors have run by then and it cannot be unloaded safely.
 */
static void lk_load(void) {
    const char *path = lk_default_library;
#ifdef LATCHKEY_TEST_SEAMS
    /* The test seam: compiled only into a debug build with LATCHKEY_TEST_SEAMS=1 (make test). */
    const char *replacement = secure_getenv("LATCHKEY_LIBSECRET_PATH");
    if (replacement != NULL && replacement[0] != '\0') {
        path = replacement;
    }
#endif
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *reason = dlerror();
        snprintf(lk_failure, sizeof lk_failure, "%s", reason != NULL ? reason : "dlopen failed");
        lk_status = LK_SECRET_LOAD_NOT_FOUND;
        return;
    }
    struct lk_functions found;
    memset(&found, 0, sizeof found);
#define LK_RESOLVE(name)                                                                      \
    {                                                                                         \
        void *symbol = dlsym(handle, #name);                                                  \
        if (symbol == NULL) {                                                                 \
            snprintf(lk_failure, sizeof lk_failure, "%s does not provide %s", path, #name);  \
            lk_status = LK_SECRET_LOAD_INCOMPLETE;                                            \
            return;                                                                           \
        }                                                                                     \
        memcpy(&found.name, &symbol, sizeof symbol);                                          \
    }
    LK_EACH_FUNCTION(LK_RESOLVE)
#undef LK_RESOLVE
    lk_table = found;
    lk_status = 0;
}

int latchkey_secret_load(char *message, size_t size) {
    pthread_once(&lk_once, lk_load);
    if (lk_status != 0 && message != NULL && size > 0) {
        snprintf(message, size, "%s", lk_failure);
    }
    return lk_status;
}

/* The wrappers, in the order of CLatchkeySecret.h. */

void lk_g_cancellable_cancel(LKGCancellable *cancellable) {
    lk_table.g_cancellable_cancel(cancellable);
}

int lk_g_cancellable_is_cancelled(LKGCancellable *cancellable) {
    return lk_table.g_cancellable_is_cancelled(cancellable);
}

LKGCancellable *lk_g_cancellable_new(void) {
    return lk_table.g_cancellable_new();
}

LKGSource *lk_g_cancellable_source_new(LKGCancellable *cancellable) {
    return lk_table.g_cancellable_source_new(cancellable);
}

unsigned int lk_g_dbus_connection_signal_subscribe(
    LKGDBusConnection *connection, const char *sender, const char *interface_name, const char *member, const char *object_path,
    const char *arg0, unsigned int flags,
    void (*callback)(LKGDBusConnection *connection, const char *sender_name, const char *object_path, const char *interface_name,
                     const char *signal_name, LKGVariant *parameters, void *user_data),
    void *user_data, void (*user_data_free_func)(void *data)) {
    return lk_table.g_dbus_connection_signal_subscribe(connection, sender, interface_name, member, object_path, arg0, flags, callback,
                                                       user_data, user_data_free_func);
}

void lk_g_dbus_connection_signal_unsubscribe(LKGDBusConnection *connection, unsigned int subscription_id) {
    lk_table.g_dbus_connection_signal_unsubscribe(connection, subscription_id);
}

unsigned int lk_g_dbus_connection_add_filter(LKGDBusConnection *connection,
                                             LKGDBusMessage *(*filter_function)(LKGDBusConnection *connection, LKGDBusMessage *message,
                                                                                int incoming, void *user_data),
                                             void *user_data, void (*user_data_free_func)(void *data)) {
    return lk_table.g_dbus_connection_add_filter(connection, filter_function, user_data, user_data_free_func);
}

void lk_g_dbus_connection_remove_filter(LKGDBusConnection *connection, unsigned int filter_id) {
    lk_table.g_dbus_connection_remove_filter(connection, filter_id);
}

const char *lk_g_dbus_message_get_arg0(LKGDBusMessage *message) {
    return lk_table.g_dbus_message_get_arg0(message);
}

const char *lk_g_dbus_message_get_interface(LKGDBusMessage *message) {
    return lk_table.g_dbus_message_get_interface(message);
}

const char *lk_g_dbus_message_get_member(LKGDBusMessage *message) {
    return lk_table.g_dbus_message_get_member(message);
}

unsigned int lk_g_dbus_message_get_message_type(LKGDBusMessage *message) {
    return lk_table.g_dbus_message_get_message_type(message);
}

int lk_g_main_context_iteration(LKGMainContext *context, int may_block) {
    return lk_table.g_main_context_iteration(context, may_block);
}

LKGMainContext *lk_g_main_context_new(void) {
    return lk_table.g_main_context_new();
}

void lk_g_main_context_pop_thread_default(LKGMainContext *context) {
    lk_table.g_main_context_pop_thread_default(context);
}

void lk_g_main_context_push_thread_default(LKGMainContext *context) {
    lk_table.g_main_context_push_thread_default(context);
}

void lk_g_main_context_unref(LKGMainContext *context) {
    lk_table.g_main_context_unref(context);
}

unsigned int lk_g_source_attach(LKGSource *source, LKGMainContext *context) {
    return lk_table.g_source_attach(source, context);
}

void lk_g_source_destroy(LKGSource *source) {
    lk_table.g_source_destroy(source);
}

void lk_g_source_set_callback(LKGSource *source, int (*func)(void *user_data), void *data, void (*notify)(void *data)) {
    lk_table.g_source_set_callback(source, func, data, notify);
}

void lk_g_source_unref(LKGSource *source) {
    lk_table.g_source_unref(source);
}

LKGVariant *lk_g_variant_new_object_path(const char *object_path) {
    return lk_table.g_variant_new_object_path(object_path);
}

LKGVariant *lk_g_dbus_connection_call_sync(LKGDBusConnection *connection, const char *bus_name, const char *object_path, const char *interface_name, const char *method_name, LKGVariant *parameters, const LKGVariantType *reply_type, unsigned int flags, int timeout_msec, LKGCancellable *cancellable, LKGError **error) {
    return lk_table.g_dbus_connection_call_sync(connection, bus_name, object_path, interface_name, method_name, parameters, reply_type, flags, timeout_msec, cancellable, error);
}

LKGDBusConnection *lk_g_bus_get_sync(int bus_type, LKGCancellable *cancellable, LKGError **error) {
    return lk_table.g_bus_get_sync(bus_type, cancellable, error);
}

int lk_g_dbus_connection_close_sync(LKGDBusConnection *connection, LKGCancellable *cancellable, LKGError **error) {
    return lk_table.g_dbus_connection_close_sync(connection, cancellable, error);
}

LKGDBusConnection *lk_g_dbus_connection_new_for_address_sync(const char *address, unsigned int flags, LKGDBusAuthObserver *observer, LKGCancellable *cancellable, LKGError **error) {
    return lk_table.g_dbus_connection_new_for_address_sync(address, flags, observer, cancellable, error);
}

uint32_t lk_g_dbus_error_quark(void) {
    return lk_table.g_dbus_error_quark();
}

LKGDBusConnection *lk_g_dbus_proxy_get_connection(LKGDBusProxy *proxy) {
    return lk_table.g_dbus_proxy_get_connection(proxy);
}

void lk_g_error_free(LKGError *error) {
    lk_table.g_error_free(error);
}

void lk_g_free(void *mem) {
    lk_table.g_free(mem);
}

int lk_g_hash_table_insert(LKGHashTable *hash_table, void *key, void *value) {
    return lk_table.g_hash_table_insert(hash_table, key, value);
}

void lk_g_hash_table_iter_init(LKGHashTableIter *iter, LKGHashTable *hash_table) {
    lk_table.g_hash_table_iter_init(iter, hash_table);
}

int lk_g_hash_table_iter_next(LKGHashTableIter *iter, void **key, void **value) {
    return lk_table.g_hash_table_iter_next(iter, key, value);
}

LKGHashTable *lk_g_hash_table_new_full(unsigned int (*hash_func)(const void *key), int (*key_equal_func)(const void *a, const void *b), void (*key_destroy_func)(void *data), void (*value_destroy_func)(void *data)) {
    return lk_table.g_hash_table_new_full(hash_func, key_equal_func, key_destroy_func, value_destroy_func);
}

void lk_g_hash_table_unref(LKGHashTable *hash_table) {
    lk_table.g_hash_table_unref(hash_table);
}

uint32_t lk_g_io_error_quark(void) {
    return lk_table.g_io_error_quark();
}

void lk_g_list_free_full(LKGList *list, void (*free_func)(void *data)) {
    lk_table.g_list_free_full(list, free_func);
}

void *lk_g_object_ref(void *object) {
    return lk_table.g_object_ref(object);
}

void lk_g_object_unref(void *object) {
    lk_table.g_object_unref(object);
}

int lk_g_str_equal(const void *v1, const void *v2) {
    return lk_table.g_str_equal(v1, v2);
}

unsigned int lk_g_str_hash(const void *v) {
    return lk_table.g_str_hash(v);
}

char *lk_g_strdup(const char *str) {
    return lk_table.g_strdup(str);
}

void lk_g_strfreev(char **str_array) {
    lk_table.g_strfreev(str_array);
}

unsigned int lk_g_strv_length(char **str_array) {
    return lk_table.g_strv_length(str_array);
}

void lk_g_variant_builder_add_value(LKGVariantBuilder *builder, LKGVariant *value) {
    lk_table.g_variant_builder_add_value(builder, value);
}

LKGVariant *lk_g_variant_builder_end(LKGVariantBuilder *builder) {
    return lk_table.g_variant_builder_end(builder);
}

LKGVariantBuilder *lk_g_variant_builder_new(const LKGVariantType *type) {
    return lk_table.g_variant_builder_new(type);
}

void lk_g_variant_builder_unref(LKGVariantBuilder *builder) {
    lk_table.g_variant_builder_unref(builder);
}

int lk_g_variant_get_boolean(LKGVariant *value) {
    return lk_table.g_variant_get_boolean(value);
}

unsigned int lk_g_variant_get_uint32(LKGVariant *value) {
    return lk_table.g_variant_get_uint32(value);
}

LKGVariant *lk_g_variant_get_child_value(LKGVariant *value, size_t index_) {
    return lk_table.g_variant_get_child_value(value, index_);
}

const char *lk_g_variant_get_string(LKGVariant *value, size_t *length) {
    return lk_table.g_variant_get_string(value, length);
}

LKGVariant *lk_g_variant_get_variant(LKGVariant *value) {
    return lk_table.g_variant_get_variant(value);
}

size_t lk_g_variant_n_children(LKGVariant *value) {
    return lk_table.g_variant_n_children(value);
}

LKGVariant *lk_g_variant_new_dict_entry(LKGVariant *key, LKGVariant *value) {
    return lk_table.g_variant_new_dict_entry(key, value);
}

LKGVariant *lk_g_variant_new_string(const char *string) {
    return lk_table.g_variant_new_string(string);
}

LKGVariant *lk_g_variant_new_tuple(LKGVariant *const *children, size_t n_children) {
    return lk_table.g_variant_new_tuple(children, n_children);
}

LKGVariant *lk_g_variant_new_variant(LKGVariant *value) {
    return lk_table.g_variant_new_variant(value);
}

LKGVariant *lk_g_variant_ref_sink(LKGVariant *value) {
    return lk_table.g_variant_ref_sink(value);
}

void lk_g_variant_type_free(LKGVariantType *type) {
    lk_table.g_variant_type_free(type);
}

LKGVariantType *lk_g_variant_type_new(const char *type_string) {
    return lk_table.g_variant_type_new(type_string);
}

void lk_g_variant_unref(LKGVariant *value) {
    lk_table.g_variant_unref(value);
}

uint32_t lk_secret_error_get_quark(void) {
    return lk_table.secret_error_get_quark();
}

int lk_secret_item_delete_sync(LKSecretItem *self, LKGCancellable *cancellable, LKGError **error) {
    return lk_table.secret_item_delete_sync(self, cancellable, error);
}

LKGHashTable *lk_secret_item_get_attributes(LKSecretItem *self) {
    return lk_table.secret_item_get_attributes(self);
}

char *lk_secret_item_get_label(LKSecretItem *self) {
    return lk_table.secret_item_get_label(self);
}

int lk_secret_item_get_locked(LKSecretItem *self) {
    return lk_table.secret_item_get_locked(self);
}

LKSecretValue *lk_secret_item_get_secret(LKSecretItem *self) {
    return lk_table.secret_item_get_secret(self);
}

int lk_secret_item_set_secret_sync(LKSecretItem *self, LKSecretValue *value, LKGCancellable *cancellable, LKGError **error) {
    return lk_table.secret_item_set_secret_sync(self, value, cancellable, error);
}

void lk_secret_password_free(char *password) {
    lk_table.secret_password_free(password);
}

char *lk_secret_password_lookupv_sync(const LKSecretSchema *schema, LKGHashTable *attributes, LKGCancellable *cancellable, LKGError **error) {
    return lk_table.secret_password_lookupv_sync(schema, attributes, cancellable, error);
}

LKSecretSchema *lk_secret_schema_newv(const char *name, unsigned int flags, LKGHashTable *attribute_names_and_types) {
    return lk_table.secret_schema_newv(name, flags, attribute_names_and_types);
}

void lk_secret_schema_unref(LKSecretSchema *schema) {
    lk_table.secret_schema_unref(schema);
}

char *lk_secret_service_create_item_dbus_path_sync(LKSecretService *self, const char *collection_path, LKGHashTable *properties, LKSecretValue *value, unsigned int flags, LKGCancellable *cancellable, LKGError **error) {
    return lk_table.secret_service_create_item_dbus_path_sync(self, collection_path, properties, value, flags, cancellable, error);
}

LKGHashTable *lk_secret_service_get_secrets_for_dbus_paths_sync(LKSecretService *self, const char **item_paths, LKGCancellable *cancellable, LKGError **error) {
    return lk_table.secret_service_get_secrets_for_dbus_paths_sync(self, item_paths, cancellable, error);
}

size_t lk_secret_service_get_type(void) {
    return lk_table.secret_service_get_type();
}

LKSecretService *lk_secret_service_open_sync(size_t service_gtype, const char *service_bus_name, unsigned int flags, LKGCancellable *cancellable, LKGError **error) {
    return lk_table.secret_service_open_sync(service_gtype, service_bus_name, flags, cancellable, error);
}

char *lk_secret_service_read_alias_dbus_path_sync(LKSecretService *self, const char *alias, LKGCancellable *cancellable, LKGError **error) {
    return lk_table.secret_service_read_alias_dbus_path_sync(self, alias, cancellable, error);
}

int lk_secret_service_search_for_dbus_paths_sync(LKSecretService *self, const LKSecretSchema *schema, LKGHashTable *attributes, LKGCancellable *cancellable, char ***unlocked, char ***locked, LKGError **error) {
    return lk_table.secret_service_search_for_dbus_paths_sync(self, schema, attributes, cancellable, unlocked, locked, error);
}

LKGList *lk_secret_service_search_sync(LKSecretService *service, const LKSecretSchema *schema, LKGHashTable *attributes, unsigned int flags, LKGCancellable *cancellable, LKGError **error) {
    return lk_table.secret_service_search_sync(service, schema, attributes, flags, cancellable, error);
}

const char *lk_secret_value_get(LKSecretValue *value, size_t *length) {
    return lk_table.secret_value_get(value, length);
}

LKSecretValue *lk_secret_value_new(const char *secret, ssize_t length, const char *content_type) {
    return lk_table.secret_value_new(secret, length, content_type);
}

void lk_secret_value_unref(void *value) {
    lk_table.secret_value_unref(value);
}

/* The wrappers only the Secret Service provider calls (LK_EACH_PROVIDER_FUNCTION). */

char *lk_g_dbus_address_get_for_bus_sync(int bus_type, LKGCancellable *cancellable, LKGError **error) {
    return lk_table.g_dbus_address_get_for_bus_sync(bus_type, cancellable, error);
}

unsigned int lk_g_bus_own_name_on_connection(LKGDBusConnection *connection, const char *name, unsigned int flags,
                                             void (*name_acquired_handler)(LKGDBusConnection *connection, const char *name,
                                                                           void *user_data),
                                             void (*name_lost_handler)(LKGDBusConnection *connection, const char *name,
                                                                       void *user_data),
                                             void *user_data, void (*user_data_free_func)(void *data)) {
    return lk_table.g_bus_own_name_on_connection(connection, name, flags, name_acquired_handler, name_lost_handler, user_data,
                                                 user_data_free_func);
}

int lk_g_dbus_connection_emit_signal(LKGDBusConnection *connection, const char *destination_bus_name, const char *object_path,
                                     const char *interface_name, const char *signal_name, LKGVariant *parameters, LKGError **error) {
    return lk_table.g_dbus_connection_emit_signal(connection, destination_bus_name, object_path, interface_name, signal_name,
                                                  parameters, error);
}

unsigned int lk_g_dbus_connection_register_subtree(LKGDBusConnection *connection, const char *object_path,
                                                   const LKGDBusSubtreeVTable *vtable, unsigned int flags,
                                                   void *user_data, void (*user_data_free_func)(void *data), LKGError **error) {
    return lk_table.g_dbus_connection_register_subtree(connection, object_path, vtable, flags, user_data, user_data_free_func,
                                                       error);
}

int lk_g_dbus_connection_unregister_subtree(LKGDBusConnection *connection, unsigned int registration_id) {
    return lk_table.g_dbus_connection_unregister_subtree(connection, registration_id);
}

LKGError *lk_g_dbus_error_new_for_dbus_error(const char *dbus_error_name, const char *dbus_error_message) {
    return lk_table.g_dbus_error_new_for_dbus_error(dbus_error_name, dbus_error_message);
}

LKGDBusInterfaceInfo *lk_g_dbus_interface_info_ref(LKGDBusInterfaceInfo *info) {
    return lk_table.g_dbus_interface_info_ref(info);
}

void lk_g_dbus_method_invocation_return_dbus_error(LKGDBusMethodInvocation *invocation, const char *error_name,
                                                   const char *error_message) {
    lk_table.g_dbus_method_invocation_return_dbus_error(invocation, error_name, error_message);
}

void lk_g_dbus_method_invocation_return_value(LKGDBusMethodInvocation *invocation, LKGVariant *parameters) {
    lk_table.g_dbus_method_invocation_return_value(invocation, parameters);
}

LKGDBusInterfaceInfo *lk_g_dbus_node_info_lookup_interface(LKGDBusNodeInfo *info, const char *name) {
    return lk_table.g_dbus_node_info_lookup_interface(info, name);
}

LKGDBusNodeInfo *lk_g_dbus_node_info_new_for_xml(const char *xml_data, LKGError **error) {
    return lk_table.g_dbus_node_info_new_for_xml(xml_data, error);
}

void *lk_g_memdup2(const void *mem, size_t byte_size) {
    return lk_table.g_memdup2(mem, byte_size);
}

char **lk_g_strsplit(const char *string, const char *delimiter, int max_tokens) {
    return lk_table.g_strsplit(string, delimiter, max_tokens);
}

LKGVariant *lk_g_variant_new_boolean(int value) {
    return lk_table.g_variant_new_boolean(value);
}

LKGVariant *lk_g_variant_new_fixed_array(const LKGVariantType *element_type, const void *elements, size_t n_elements,
                                         size_t element_size) {
    return lk_table.g_variant_new_fixed_array(element_type, elements, n_elements, element_size);
}

LKGVariant *lk_g_variant_new_uint64(uint64_t value) {
    return lk_table.g_variant_new_uint64(value);
}

const void *lk_g_variant_get_fixed_array(LKGVariant *value, size_t *n_elements, size_t element_size) {
    return lk_table.g_variant_get_fixed_array(value, n_elements, element_size);
}

const char *lk_g_variant_get_type_string(LKGVariant *value) {
    return lk_table.g_variant_get_type_string(value);
}
