#ifndef LATCHKEY_GTK_SHIMS_H
#define LATCHKEY_GTK_SHIMS_H

#include <gtk/gtk.h>

/// A handler of a signal whose only arguments are the emitter and the user data
/// ("clicked", "changed", "activate", "toggled", "destroy").
typedef void (*LatchkeySignalHandler)(gpointer instance, gpointer data);

/// A handler of GtkWindow's "close-request"; returns TRUE to keep the window open.
typedef gboolean (*LatchkeyCloseHandler)(GtkWindow *window, gpointer data);

/// A handler of GtkEventControllerKey's "key-pressed"; returns TRUE when it handled the key.
typedef gboolean (*LatchkeyKeyHandler)(GtkEventControllerKey *controller, guint keyval, guint keycode,
                                       GdkModifierType state, gpointer data);

/// g_signal_connect (a macro) for a LatchkeySignalHandler; `destroy` frees `data`
/// when the handler is disconnected or the instance finalized.
gulong latchkey_signal_connect(gpointer instance, const gchar *signal, LatchkeySignalHandler handler,
                               gpointer data, GClosureNotify destroy);

/// g_signal_connect for GtkWindow's "close-request".
gulong latchkey_signal_connect_close(GtkWindow *window, LatchkeyCloseHandler handler,
                                     gpointer data, GClosureNotify destroy);

/// g_signal_connect for GtkEventControllerKey's "key-pressed".
gulong latchkey_signal_connect_key(GtkEventControllerKey *controller, LatchkeyKeyHandler handler,
                                   gpointer data, GClosureNotify destroy);

/// A handler of GtkEditable's "insert-text": the text, its length in bytes (-1: NUL-terminated),
/// and the character position, which the handler may move past what it inserts.
typedef void (*LatchkeyInsertTextHandler)(GtkEditable *editable, const char *text, int length,
                                          int *position, gpointer data);

/// A handler of GtkEditable's "delete-text": the character range [start, end) (end -1: to the end).
typedef void (*LatchkeyDeleteTextHandler)(GtkEditable *editable, int start, int end, gpointer data);

/// g_signal_connect for GtkEditable's "insert-text".
gulong latchkey_signal_connect_insert_text(GtkEditable *editable, LatchkeyInsertTextHandler handler,
                                           gpointer data, GClosureNotify destroy);

/// g_signal_connect for GtkEditable's "delete-text".
gulong latchkey_signal_connect_delete_text(GtkEditable *editable, LatchkeyDeleteTextHandler handler,
                                           gpointer data, GClosureNotify destroy);

#endif
