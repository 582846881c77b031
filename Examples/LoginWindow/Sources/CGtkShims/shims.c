#include "CGtkShims.h"

gulong latchkey_signal_connect(gpointer instance, const gchar *signal, LatchkeySignalHandler handler,
                               gpointer data, GClosureNotify destroy) {
    return g_signal_connect_data(instance, signal, G_CALLBACK(handler), data, destroy, 0);
}

gulong latchkey_signal_connect_close(GtkWindow *window, LatchkeyCloseHandler handler,
                                     gpointer data, GClosureNotify destroy) {
    return g_signal_connect_data(window, "close-request", G_CALLBACK(handler), data, destroy, 0);
}

gulong latchkey_signal_connect_key(GtkEventControllerKey *controller, LatchkeyKeyHandler handler,
                                   gpointer data, GClosureNotify destroy) {
    return g_signal_connect_data(controller, "key-pressed", G_CALLBACK(handler), data, destroy, 0);
}

gulong latchkey_signal_connect_insert_text(GtkEditable *editable, LatchkeyInsertTextHandler handler,
                                           gpointer data, GClosureNotify destroy) {
    return g_signal_connect_data(editable, "insert-text", G_CALLBACK(handler), data, destroy, 0);
}

gulong latchkey_signal_connect_delete_text(GtkEditable *editable, LatchkeyDeleteTextHandler handler,
                                           gpointer data, GClosureNotify destroy) {
    return g_signal_connect_data(editable, "delete-text", G_CALLBACK(handler), data, destroy, 0);
}
