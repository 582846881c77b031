/// The login screen's logic as a pure state machine, independent of any UI.
///
/// A UI renders a ``Login/State``, turns what the user does into
/// ``Login/Event``s, and hands the ``Login/Effect``s that ``Login/reduce(_:_:)``
/// returns to a driver such as ``LoginController``. The reducer performs no
/// I/O and reads no clock: time arrives inside events, so every outcome,
/// including a rate-limit countdown, is deterministic.
public enum Login {}
