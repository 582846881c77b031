internal import CLatchkeySecret

// The GLib values the libsecret calls take (see `LibSecret.swift`), each freed by its owner.

extension LibSecret {
    /// A `GHashTable` of string attributes (`g_hash_table_new_full`), freed by its owner.
    final class AttributeTable {
        let pointer: OpaquePointer
        init(_ attributes: [String: String]) {
            pointer = lk_g_hash_table_new_full(lk_g_str_hash, lk_g_str_equal, lk_g_free, lk_g_free)
            for (key, value) in attributes {
                lk_g_hash_table_insert(pointer, lk_g_strdup(key), lk_g_strdup(value))
            }
        }
        deinit { lk_g_hash_table_unref(pointer) }
    }

    /// A `GHashTable` of an item's D-Bus properties (its label and its attributes
    /// as `a{ss}`), as `secret_service_create_item_dbus_path_sync` takes them; freed by its owner.
    final class PropertyTable {
        let pointer: OpaquePointer
        init(label: String, attributes: [String: String]) {
            pointer = lk_g_hash_table_new_full(
                lk_g_str_hash, lk_g_str_equal, lk_g_free, { lk_g_variant_unref(OpaquePointer($0)) })
            let type = lk_g_variant_type_new("a{ss}")
            let builder = lk_g_variant_builder_new(type)
            lk_g_variant_type_free(type)
            for (key, value) in attributes {
                lk_g_variant_builder_add_value(
                    builder, lk_g_variant_new_dict_entry(lk_g_variant_new_string(key), lk_g_variant_new_string(value)))
            }
            lk_g_hash_table_insert(
                pointer, lk_g_strdup("org.freedesktop.Secret.Item.Attributes"),
                UnsafeMutableRawPointer(lk_g_variant_ref_sink(lk_g_variant_builder_end(builder))))
            lk_g_variant_builder_unref(builder)
            lk_g_hash_table_insert(
                pointer, lk_g_strdup("org.freedesktop.Secret.Item.Label"),
                UnsafeMutableRawPointer(lk_g_variant_ref_sink(lk_g_variant_new_string(label))))
        }
        deinit { lk_g_hash_table_unref(pointer) }
    }

    /// A `SecretValue` holding a copy of a secret (`secret_value_new` copies into
    /// libsecret's own memory, which it zeroes when freed), released by its owner.
    final class Value {
        let pointer: OpaquePointer
        init(_ secret: SecretBytes) {
            pointer = secret.withUnsafeBytes { bytes in
                emptySecret.withUnsafeBufferPointer { empty in
                    lk_secret_value_new(
                        bytes.baseAddress?.assumingMemoryBound(to: CChar.self) ?? empty.baseAddress!,
                        bytes.count, "application/octet-stream")
                }
            }
        }
        deinit { lk_secret_value_unref(UnsafeMutableRawPointer(pointer)) }
    }
}
