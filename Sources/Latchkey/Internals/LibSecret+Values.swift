internal import CSecret

// The GLib values the libsecret calls take (see `LibSecret.swift`), each freed by its owner.

extension LibSecret {
    /// A `GHashTable` of string attributes (`g_hash_table_new_full`), freed by its owner.
    final class AttributeTable {
        let pointer: OpaquePointer
        init(_ attributes: [String: String]) {
            pointer = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free)
            for (key, value) in attributes {
                g_hash_table_insert(pointer, g_strdup(key), g_strdup(value))
            }
        }
        deinit { g_hash_table_unref(pointer) }
    }

    /// A `GHashTable` of an item's D-Bus properties (its label and its attributes
    /// as `a{ss}`), as `secret_service_create_item_dbus_path_sync` takes them; freed by its owner.
    final class PropertyTable {
        let pointer: OpaquePointer
        init(label: String, attributes: [String: String]) {
            pointer = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, { g_variant_unref(OpaquePointer($0)) })
            let type = g_variant_type_new("a{ss}")
            let builder = g_variant_builder_new(type)
            g_variant_type_free(type)
            for (key, value) in attributes {
                g_variant_builder_add_value(builder, g_variant_new_dict_entry(g_variant_new_string(key), g_variant_new_string(value)))
            }
            g_hash_table_insert(pointer, g_strdup("org.freedesktop.Secret.Item.Attributes"),
                                UnsafeMutableRawPointer(g_variant_ref_sink(g_variant_builder_end(builder))))
            g_variant_builder_unref(builder)
            g_hash_table_insert(pointer, g_strdup("org.freedesktop.Secret.Item.Label"),
                                UnsafeMutableRawPointer(g_variant_ref_sink(g_variant_new_string(label))))
        }
        deinit { g_hash_table_unref(pointer) }
    }

    /// A `SecretValue` holding a copy of a secret (`secret_value_new` copies into
    /// libsecret's own memory, which it zeroes when freed), released by its owner.
    final class Value {
        let pointer: OpaquePointer
        init(_ secret: SecretBytes) {
            pointer = secret.withUnsafeBytes { bytes in
                emptySecret.withUnsafeBufferPointer { empty in
                    secret_value_new(bytes.baseAddress?.assumingMemoryBound(to: CChar.self) ?? empty.baseAddress!,
                                     bytes.count, "application/octet-stream")
                }
            }
        }
        deinit { secret_value_unref(UnsafeMutableRawPointer(pointer)) }
    }
}
