// Every call into GTK, GDK and GLib: the only file that sees a C type or a pointer.
// The rest of the app works with the classes below, isolated to `GtkActor`,
// whose executor is the GLib main loop on the main thread.

internal import CGtk
internal import CGtkShims
import Foundation
import Latchkey

// MARK: - The GLib main loop as a Swift executor

/// Runs Swift jobs on the GLib main loop (`g_idle_add_full`), so code isolated
/// to ``GtkActor`` runs on the thread that owns GTK, between GTK's own events.
final class GLibMainLoopExecutor: SerialExecutor {
    /// The one executor: GTK has one main loop.
    static let shared = GLibMainLoopExecutor()

    /// One job waiting for its turn on the main loop.
    private final class PendingJob: Sendable {
        let job: UnownedJob
        init(_ job: UnownedJob) { self.job = job }
    }

    /// Queues `job` as an idle source of the default main context (`g_idle_add_full`).
    func enqueue(_ job: consuming ExecutorJob) {
        let pending = Unmanaged.passRetained(PendingJob(UnownedJob(job))).toOpaque()
        g_idle_add_full(
            G_PRIORITY_DEFAULT,
            { data in
                guard let data else { return 0 }
                let pending = Unmanaged<PendingJob>.fromOpaque(data).takeRetainedValue()
                pending.job.runSynchronously(on: GLibMainLoopExecutor.shared.asUnownedSerialExecutor())
                return 0 // G_SOURCE_REMOVE: run once.
            }, pending, nil)
    }

    /// GTK callbacks arrive on the main thread, where the main loop runs.
    func checkIsolated() {
        precondition(Thread.isMainThread, "GTK is used only from the main thread")
    }
}

/// The isolation of everything that touches GTK: the main thread, through the GLib main loop.
@globalActor actor GtkActor {
    /// The actor whose executor is the GLib main loop.
    static let shared = GtkActor()

    nonisolated var unownedExecutor: UnownedSerialExecutor {
        GLibMainLoopExecutor.shared.asUnownedSerialExecutor()
    }

    /// Runs `operation` as GtkActor-isolated code, from a GTK callback or from
    /// `main`, which run on the main thread without having been scheduled by Swift.
    /// - Parameter operation: The isolated work.
    /// - Returns: What `operation` returns.
    static func assumeIsolated<T>(_ operation: @GtkActor () -> T) -> T {
        shared.preconditionIsolated("GTK is used only from the main thread")
        return withoutActuallyEscaping(operation) { isolated in
            // Sound after the check above, as MainActor.assumeIsolated does it.
            unsafeBitCast(isolated, to: (() -> T).self)()
        }
    }
}

// MARK: - Start-up and the main loop

/// GTK's process-wide state.
@GtkActor
enum Gtk {
    private static var mainLoop: OpaquePointer?

    /// Initialises GTK (`gtk_init_check`).
    /// - Returns: False when no display can be opened.
    static func initialize() -> Bool {
        gtk_init_check() != 0
    }

    /// Runs the GLib main loop until ``quit()`` (`g_main_loop_run`).
    static func run() {
        let loop = g_main_loop_new(nil, 0)
        mainLoop = loop
        g_main_loop_run(loop)
        g_main_loop_unref(loop)
        mainLoop = nil
    }

    /// Ends ``run()`` (`g_main_loop_quit`).
    static func quit() {
        if let mainLoop { g_main_loop_quit(mainLoop) }
    }

    /// Calls `handler` on the main loop when the process receives SIGTERM or
    /// SIGINT (`g_unix_signal_add_full`), so it can close like the window does.
    static func onTerminationRequest(_ handler: @escaping @GtkActor () -> Void) {
        for signal in [SIGTERM, SIGINT] {
            g_unix_signal_add_full(
                G_PRIORITY_DEFAULT, signal,
                { data in
                    let handler = Handler<@GtkActor () -> Void>.from(data)
                    GtkActor.assumeIsolated { handler.function() }
                    return 1 // G_SOURCE_CONTINUE
                }, Handler(handler).retained,
                { data in
                    if let data { Unmanaged<AnyObject>.fromOpaque(data).release() }
                })
        }
    }
}

// MARK: - Signal handlers

/// A Swift closure kept alive by GLib for as long as the signal stays connected.
private final class Handler<Function> {
    let function: Function
    init(_ function: Function) { self.function = function }

    /// The retained pointer GLib passes back to the trampoline.
    var retained: gpointer { Unmanaged.passRetained(self).toOpaque() }

    /// The handler behind `data`, without consuming GLib's reference.
    static func from(_ data: gpointer?) -> Handler<Function> {
        Unmanaged<Handler<Function>>.fromOpaque(data!).takeUnretainedValue()
    }
}

/// Releases a handler when GLib disconnects it (a GClosureNotify).
private func releaseHandler(_ data: gpointer?, _: UnsafeMutablePointer<GClosure>?) {
    guard let data else { return }
    Unmanaged<AnyObject>.fromOpaque(data).release()
}

// MARK: - Widgets

/// A GTK widget. Widgets belong to their parent (and the window to GTK), so
/// this wrapper neither references nor frees them.
@GtkActor
class Widget {
    fileprivate let pointer: UnsafeMutablePointer<GtkWidget>

    fileprivate init(_ pointer: UnsafeMutablePointer<GtkWidget>) {
        self.pointer = pointer
    }

    fileprivate var object: gpointer { UnsafeMutableRawPointer(pointer) }

    /// The widget as an instance of its GTK class (the C cast macros' job).
    fileprivate func cast<T>() -> UnsafeMutablePointer<T> {
        UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: T.self)
    }

    /// Whether the widget takes input (`gtk_widget_set_sensitive`).
    var isSensitive: Bool {
        get { gtk_widget_get_sensitive(pointer) != 0 }
        set { gtk_widget_set_sensitive(pointer, newValue ? 1 : 0) }
    }

    /// Whether the widget is shown (`gtk_widget_set_visible`).
    var isVisible: Bool {
        get { gtk_widget_get_visible(pointer) != 0 }
        set { gtk_widget_set_visible(pointer, newValue ? 1 : 0) }
    }

    /// Moves the keyboard focus here (`gtk_widget_grab_focus`).
    func grabFocus() {
        gtk_widget_grab_focus(pointer)
    }

    /// Sets the space around the widget (`gtk_widget_set_margin_*`).
    func setMargins(_ margin: Int32) {
        gtk_widget_set_margin_top(pointer, margin)
        gtk_widget_set_margin_bottom(pointer, margin)
        gtk_widget_set_margin_start(pointer, margin)
        gtk_widget_set_margin_end(pointer, margin)
    }

    /// Lets the widget take extra horizontal space (`gtk_widget_set_hexpand`).
    func expandHorizontally() {
        gtk_widget_set_hexpand(pointer, 1)
    }

    /// Places the widget at the end or the centre of its space (`gtk_widget_set_halign`).
    func alignHorizontally(_ alignment: Alignment) {
        gtk_widget_set_halign(pointer, alignment.gtk)
    }

    /// Centres the widget vertically in its space (`gtk_widget_set_valign`).
    func centerVertically() {
        gtk_widget_set_valign(pointer, GTK_ALIGN_CENTER)
    }

    /// Adds a CSS style class (`gtk_widget_add_css_class`).
    func addStyleClass(_ name: String) {
        gtk_widget_add_css_class(pointer, name)
    }

    /// The widget's preferred height at `width` (`gtk_widget_measure`).
    func naturalHeight(forWidth width: Int32) -> Int32 {
        var minimum: Int32 = 0
        var natural: Int32 = 0
        gtk_widget_measure(pointer, GTK_ORIENTATION_VERTICAL, width, &minimum, &natural, nil, nil)
        return natural
    }

    /// The widget's current width (`gtk_widget_get_width`).
    var width: Int32 { gtk_widget_get_width(pointer) }
}

/// Where a widget sits in the space it is given.
enum Alignment {
    case start, center, end, fill

    fileprivate var gtk: GtkAlign {
        switch self {
        case .start: GTK_ALIGN_START
        case .center: GTK_ALIGN_CENTER
        case .end: GTK_ALIGN_END
        case .fill: GTK_ALIGN_FILL
        }
    }
}

/// A top-level window (`GtkWindow`).
final class Window: Widget {
    private var windowPointer: UnsafeMutablePointer<GtkWindow> {
        UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: GtkWindow.self)
    }

    /// Creates a window (`gtk_window_new`).
    init() {
        super.init(gtk_window_new())
    }

    /// The title bar's text (`gtk_window_set_title`).
    var title: String {
        get { String(cString: gtk_window_get_title(windowPointer)) }
        set { gtk_window_set_title(windowPointer, newValue) }
    }

    /// Sets the window's content (`gtk_window_set_child`).
    func setChild(_ child: Widget) {
        gtk_window_set_child(windowPointer, child.pointer)
    }

    /// Shows the window and raises it (`gtk_window_present`).
    func present() {
        gtk_window_present(windowPointer)
    }

    /// Asks the window to take at least `height` at its current width
    /// (`gtk_window_set_default_size`), so content that grew is not cut off.
    func grow(toHeight height: Int32) {
        let width = gtk_widget_get_width(pointer)
        guard width > 0, height > gtk_widget_get_height(pointer) else { return }
        gtk_window_set_default_size(windowPointer, width, height)
    }

    /// Closes and frees the window (`gtk_window_destroy`).
    func destroy() {
        gtk_window_destroy(windowPointer)
    }

    /// Calls `handler` when the user asks to close the window ("close-request");
    /// the window stays open: the handler destroys it when it is done.
    func onCloseRequest(_ handler: @escaping @GtkActor () -> Void) {
        let box = Handler(handler)
        latchkey_signal_connect_close(
            windowPointer,
            { _, data in
                let handler = Handler<@GtkActor () -> Void>.from(data)
                GtkActor.assumeIsolated { handler.function() }
                return 1 // Keep the window open; the handler closes it.
            }, box.retained, releaseHandler)
    }
}

/// A row or column of widgets (`GtkBox`).
final class Box: Widget {
    /// Creates a box (`gtk_box_new`).
    /// - Parameters:
    ///   - vertical: A column when true, else a row.
    ///   - spacing: Pixels between children.
    init(vertical: Bool, spacing: Int32) {
        super.init(gtk_box_new(vertical ? GTK_ORIENTATION_VERTICAL : GTK_ORIENTATION_HORIZONTAL, spacing))
    }

    /// Adds `child` at the end (`gtk_box_append`).
    func append(_ child: Widget) {
        gtk_box_append(cast(), child.pointer)
    }
}

/// A table of widgets (`GtkGrid`).
final class Grid: Widget {
    /// Creates a grid with the given spacing (`gtk_grid_new`).
    init(rowSpacing: UInt32, columnSpacing: UInt32) {
        super.init(gtk_grid_new())
        gtk_grid_set_row_spacing(cast(), rowSpacing)
        gtk_grid_set_column_spacing(cast(), columnSpacing)
    }

    /// Places `child` in a cell (`gtk_grid_attach`).
    func attach(_ child: Widget, column: Int32, row: Int32) {
        gtk_grid_attach(cast(), child.pointer, column, row, 1, 1)
    }
}

/// A scrollable view of one child (`GtkScrolledWindow`) that asks for the
/// child's whole natural size, so it scrolls only when the window is smaller.
final class ScrolledView: Widget {
    /// Creates the view (`gtk_scrolled_window_new`): never scrolls sideways
    /// (the window grows to the content's width instead), scrolls vertically when needed.
    init(child: Widget) {
        super.init(gtk_scrolled_window_new())
        let view = OpaquePointer(pointer)
        gtk_scrolled_window_set_policy(view, GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC)
        gtk_scrolled_window_set_propagate_natural_height(view, 1)
        gtk_scrolled_window_set_propagate_natural_width(view, 1)
        gtk_scrolled_window_set_child(view, child.pointer)
    }
}

/// A text (`GtkLabel`).
final class Label: Widget {
    private var label: OpaquePointer { OpaquePointer(pointer) }

    /// Creates a label (`gtk_label_new`).
    /// - Parameters:
    ///   - text: The text.
    ///   - wraps: Whether long text wraps onto more lines (by word, then by
    ///     character, for languages without spaces) instead of widening the window.
    init(_ text: String = "", wraps: Bool = false) {
        super.init(gtk_label_new(text))
        if wraps {
            gtk_label_set_wrap(label, 1)
            gtk_label_set_wrap_mode(label, PANGO_WRAP_WORD_CHAR)
            gtk_label_set_max_width_chars(label, 44)
        }
    }

    /// The text (`gtk_label_set_text`).
    var text: String {
        get { String(cString: gtk_label_get_text(label)) }
        set { gtk_label_set_text(label, newValue) }
    }

    /// The horizontal alignment of the text, 0 (start) to 1 (end) (`gtk_label_set_xalign`).
    var textAlignment: Float {
        get { gtk_label_get_xalign(label) }
        set { gtk_label_set_xalign(label, newValue) }
    }

    /// Names `widget` by this label, for screen readers too (`gtk_label_set_mnemonic_widget`).
    func labels(_ widget: Widget) {
        gtk_label_set_mnemonic_widget(label, widget.pointer)
    }
}

/// An icon from the theme (`GtkImage`).
final class Icon: Widget {
    /// Creates an icon (`gtk_image_new_from_icon_name`).
    init(named name: String) {
        super.init(gtk_image_new_from_icon_name(name))
    }

    /// Shows another icon (`gtk_image_set_from_icon_name`).
    func show(named name: String) {
        gtk_image_set_from_icon_name(OpaquePointer(pointer), name)
    }
}

/// A one-line text field (`GtkEntry`).
final class TextField: Widget {
    /// Creates a text field (`gtk_entry_new`) wide enough for an e-mail address.
    init() {
        super.init(gtk_entry_new())
        gtk_editable_set_width_chars(OpaquePointer(pointer), 24)
    }

    /// The text (`gtk_editable_get_text`, `gtk_editable_set_text`).
    var text: String {
        get { String(cString: gtk_editable_get_text(OpaquePointer(pointer))) }
        set { gtk_editable_set_text(OpaquePointer(pointer), newValue) }
    }

    /// Calls `handler` after every change of the text ("changed").
    func onChange(_ handler: @escaping @GtkActor () -> Void) {
        connect(object, "changed", handler)
    }

    /// Calls `handler` when the user presses Return ("activate").
    func onReturn(_ handler: @escaping @GtkActor () -> Void) {
        connect(object, "activate", handler)
    }
}

/// A password field (`GtkPasswordEntry`): shows dots, offers no peek button
/// and no copying out.
///
/// GTK keeps only mask characters: every character typed or pasted is taken
/// out of the "insert-text" signal into ``secret`` (zeroed memory), and a "●"
/// goes into the field in its place, so neither GTK's buffer nor the
/// accessibility tree (GTK 4.8 exposes an entry's buffer as its text) ever
/// holds the password. Deletions ("delete-text") remove the same characters
/// from the secret, so editing, selecting and pasting work as usual.
final class PasswordField: Widget {
    private static let mask = "\u{25CF}"

    /// The password as typed, never in GTK's buffer.
    private(set) var secret = SecretBytes()
    /// True while the field inserts its own mask characters.
    private var masking = false

    /// Creates a password field (`gtk_password_entry_new`).
    init() {
        super.init(gtk_password_entry_new())
        gtk_password_entry_set_show_peek_icon(OpaquePointer(pointer), 0)
        gtk_editable_set_width_chars(OpaquePointer(pointer), 24)
        // The text signals come from the field's delegate (a GtkText).
        let editable = gtk_editable_get_delegate(OpaquePointer(pointer)) ?? OpaquePointer(pointer)
        let insert = Handler<
            @GtkActor (OpaquePointer?, UnsafePointer<CChar>?, Int32, UnsafeMutablePointer<Int32>?) -> Void
        > { [weak self] editable, text, length, position in
            self?.take(text, length: length, at: position, from: editable)
        }
        latchkey_signal_connect_insert_text(
            editable,
            { editable, text, length, position, data in
                let handler = Handler<
                    @GtkActor (OpaquePointer?, UnsafePointer<CChar>?, Int32, UnsafeMutablePointer<Int32>?) -> Void
                >.from(data)
                GtkActor.assumeIsolated { handler.function(editable, text, length, position) }
            }, insert.retained, releaseHandler)
        let delete = Handler<@GtkActor (Int32, Int32) -> Void> { [weak self] start, end in
            self?.remove(from: start, to: end)
        }
        latchkey_signal_connect_delete_text(
            editable,
            { _, start, end, data in
                let handler = Handler<@GtkActor (Int32, Int32) -> Void>.from(data)
                GtkActor.assumeIsolated { handler.function(start, end) }
            }, delete.retained, releaseHandler)
    }

    /// Moves typed text into ``secret`` and puts as many mask characters into the field.
    private func take(
        _ text: UnsafePointer<CChar>?, length: Int32, at position: UnsafeMutablePointer<Int32>?,
        from editable: OpaquePointer?
    ) {
        guard !masking, let text, let position, let editable else { return }
        let typed = UnsafeRawBufferPointer(
            start: UnsafeRawPointer(text), count: length < 0 ? strlen(text) : Int(length))
        let characters = typed.count { $0 & 0xC0 != 0x80 }
        secret = secret.withUnsafeBytes { old in
            let split = Self.byteOffset(ofCharacter: Int(position.pointee), in: old)
            return SecretBytes(
                [
                    UnsafeRawBufferPointer(rebasing: old[..<split]), typed,
                    UnsafeRawBufferPointer(rebasing: old[split...]),
                ].joined())
        }
        g_signal_stop_emission_by_name(UnsafeMutableRawPointer(editable), "insert-text")
        masking = true
        gtk_editable_insert_text(editable, String(repeating: Self.mask, count: characters), -1, position)
        masking = false
    }

    /// Removes the characters [start, end) (end -1: to the end) from ``secret``.
    private func remove(from start: Int32, to end: Int32) {
        guard !masking else { return }
        secret = secret.withUnsafeBytes { old in
            let from = Self.byteOffset(ofCharacter: Int(start), in: old)
            let to = end < 0 ? old.count : Self.byteOffset(ofCharacter: Int(end), in: old)
            guard from < to else { return secret }
            return SecretBytes(
                [UnsafeRawBufferPointer(rebasing: old[..<from]), UnsafeRawBufferPointer(rebasing: old[to...])].joined())
        }
    }

    /// The byte offset of UTF-8 character `index` in `bytes` (the end when past it).
    private static func byteOffset(ofCharacter index: Int, in bytes: UnsafeRawBufferPointer) -> Int {
        var seen = -1
        for (offset, byte) in bytes.enumerated() where byte & 0xC0 != 0x80 {
            seen += 1
            if seen == index { return offset }
        }
        return bytes.count
    }

    /// Whether the field holds no text.
    var isEmpty: Bool { secret.isEmpty }

    /// Empties the field by code (`gtk_editable_set_text`); emits "changed".
    func clear() {
        gtk_editable_set_text(OpaquePointer(pointer), "")
        secret = SecretBytes()
    }

    /// Calls `handler` after every change of the text ("changed").
    func onChange(_ handler: @escaping @GtkActor () -> Void) {
        connect(object, "changed", handler)
    }

    /// Calls `handler` when the user presses Return ("activate").
    func onReturn(_ handler: @escaping @GtkActor () -> Void) {
        connect(object, "activate", handler)
    }

    /// Calls `handler` when the user presses Escape in the field (a
    /// `GtkEventControllerKey` in the capture phase, "key-pressed").
    func onEscape(_ handler: @escaping @GtkActor () -> Void) {
        let controller = gtk_event_controller_key_new()
        gtk_event_controller_set_propagation_phase(controller, GTK_PHASE_CAPTURE)
        let box = Handler(handler)
        latchkey_signal_connect_key(
            controller,
            { _, keyval, _, _, data in
                guard keyval == UInt32(GDK_KEY_Escape) else { return 0 }
                let handler = Handler<@GtkActor () -> Void>.from(data)
                GtkActor.assumeIsolated { handler.function() }
                return 1
            }, box.retained, releaseHandler)
        gtk_widget_add_controller(pointer, controller)
    }
}

/// A check box with a label (`GtkCheckButton`).
final class CheckBox: Widget {
    /// Creates a check box (`gtk_check_button_new_with_label`).
    init(label: String) {
        super.init(gtk_check_button_new_with_label(label))
    }

    /// Whether it is checked (`gtk_check_button_set_active`); setting it emits "toggled".
    var isChecked: Bool {
        get { gtk_check_button_get_active(cast()) != 0 }
        set { gtk_check_button_set_active(cast(), newValue ? 1 : 0) }
    }

    /// Calls `handler` after every change ("toggled").
    func onToggle(_ handler: @escaping @GtkActor () -> Void) {
        connect(object, "toggled", handler)
    }
}

/// A push button (`GtkButton`).
final class Button: Widget {
    /// Creates a button (`gtk_button_new_with_label`).
    init(label: String) {
        super.init(gtk_button_new_with_label(label))
    }

    /// Calls `handler` when the button is pressed ("clicked").
    func onClick(_ handler: @escaping @GtkActor () -> Void) {
        connect(object, "clicked", handler)
    }
}

/// A busy indicator (`GtkSpinner`).
final class Spinner: Widget {
    /// Creates a stopped spinner (`gtk_spinner_new`).
    init() {
        super.init(gtk_spinner_new())
    }

    /// Whether it spins (`gtk_spinner_start`, `gtk_spinner_stop`).
    var isSpinning: Bool {
        get { gtk_spinner_get_spinning(OpaquePointer(pointer)) != 0 }
        set { gtk_spinner_set_spinning(OpaquePointer(pointer), newValue ? 1 : 0) }
    }
}

/// Connects a signal whose handler takes only the emitter (g_signal_connect, through the shim).
@GtkActor
private func connect(_ object: gpointer, _ signal: String, _ handler: @escaping @GtkActor () -> Void) {
    let box = Handler(handler)
    latchkey_signal_connect(
        object, signal,
        { _, data in
            let handler = Handler<@GtkActor () -> Void>.from(data)
            GtkActor.assumeIsolated { handler.function() }
        }, box.retained, releaseHandler)
}
