#ifndef LATCHKEY_CSECRET_FUNCTIONS_H
#define LATCHKEY_CSECRET_FUNCTIONS_H

/*
 * Every function CLatchkeySecret.h wraps, as an X-macro: the loader resolves each with
 * dlsym into a pointer of its wrapper's type, and the header check
 * (Tests/CLatchkeySecretHeader/check.c) compares each wrapper's signature with the real
 * function's. A wrapper added to CLatchkeySecret.h without a line here does not compile.
 */
#define LK_EACH_FUNCTION(X) \
    X(g_bus_get_sync) \
    X(g_cancellable_cancel) \
    X(g_cancellable_is_cancelled) \
    X(g_cancellable_new) \
    X(g_cancellable_source_new) \
    X(g_dbus_connection_add_filter) \
    X(g_dbus_connection_call_sync) \
    X(g_dbus_connection_close_sync) \
    X(g_dbus_connection_new_for_address_sync) \
    X(g_dbus_connection_remove_filter) \
    X(g_dbus_connection_signal_subscribe) \
    X(g_dbus_connection_signal_unsubscribe) \
    X(g_dbus_error_quark) \
    X(g_dbus_message_get_arg0) \
    X(g_dbus_message_get_interface) \
    X(g_dbus_message_get_member) \
    X(g_dbus_message_get_message_type) \
    X(g_dbus_proxy_get_connection) \
    X(g_error_free) \
    X(g_free) \
    X(g_hash_table_insert) \
    X(g_hash_table_iter_init) \
    X(g_hash_table_iter_next) \
    X(g_hash_table_new_full) \
    X(g_hash_table_unref) \
    X(g_io_error_quark) \
    X(g_list_free_full) \
    X(g_main_context_iteration) \
    X(g_main_context_new) \
    X(g_main_context_pop_thread_default) \
    X(g_main_context_push_thread_default) \
    X(g_main_context_unref) \
    X(g_object_ref) \
    X(g_object_unref) \
    X(g_source_attach) \
    X(g_source_destroy) \
    X(g_source_set_callback) \
    X(g_source_unref) \
    X(g_str_equal) \
    X(g_str_hash) \
    X(g_strdup) \
    X(g_strfreev) \
    X(g_strv_length) \
    X(g_variant_builder_add_value) \
    X(g_variant_builder_end) \
    X(g_variant_builder_new) \
    X(g_variant_builder_unref) \
    X(g_variant_get_boolean) \
    X(g_variant_get_uint32) \
    X(g_variant_get_child_value) \
    X(g_variant_get_string) \
    X(g_variant_get_variant) \
    X(g_variant_n_children) \
    X(g_variant_new_dict_entry) \
    X(g_variant_new_object_path) \
    X(g_variant_new_string) \
    X(g_variant_new_tuple) \
    X(g_variant_new_variant) \
    X(g_variant_ref_sink) \
    X(g_variant_type_free) \
    X(g_variant_type_new) \
    X(g_variant_unref) \
    X(secret_error_get_quark) \
    X(secret_item_delete_sync) \
    X(secret_item_get_attributes) \
    X(secret_item_get_label) \
    X(secret_item_get_locked) \
    X(secret_item_get_secret) \
    X(secret_item_set_secret_sync) \
    X(secret_password_free) \
    X(secret_password_lookupv_sync) \
    X(secret_schema_newv) \
    X(secret_schema_unref) \
    X(secret_service_create_item_dbus_path_sync) \
    X(secret_service_get_secrets_for_dbus_paths_sync) \
    X(secret_service_get_type) \
    X(secret_service_open_sync) \
    X(secret_service_read_alias_dbus_path_sync) \
    X(secret_service_search_for_dbus_paths_sync) \
    X(secret_service_search_sync) \
    X(secret_value_get) \
    X(secret_value_new) \
    X(secret_value_unref) \
    LK_EACH_PROVIDER_FUNCTION(X)

/* The ones only the Secret Service provider (LatchkeyProvider) calls. */
#define LK_EACH_PROVIDER_FUNCTION(X) \
    X(g_bus_own_name_on_connection) \
    X(g_dbus_address_get_for_bus_sync) \
    X(g_dbus_connection_emit_signal) \
    X(g_dbus_connection_register_subtree) \
    X(g_dbus_connection_unregister_subtree) \
    X(g_dbus_error_new_for_dbus_error) \
    X(g_dbus_interface_info_ref) \
    X(g_dbus_method_invocation_return_dbus_error) \
    X(g_dbus_method_invocation_return_value) \
    X(g_dbus_node_info_lookup_interface) \
    X(g_dbus_node_info_new_for_xml) \
    X(g_memdup2) \
    X(g_strsplit) \
    X(g_variant_get_fixed_array) \
    X(g_variant_get_type_string) \
    X(g_variant_new_boolean) \
    X(g_variant_new_fixed_array) \
    X(g_variant_new_uint64)

#endif
