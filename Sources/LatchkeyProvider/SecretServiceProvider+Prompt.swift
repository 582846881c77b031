import Latchkey

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A prompt `Unlock` returned: the client that asked, the objects it unlocks, and whether the
/// client showed it (`Prompt`).
struct PendingPrompt {
    let owner: String
    let objects: [String]
    var shown = false
}

// Locking and unlocking a passphrase vault: org.freedesktop.Secret.Prompt at
// /org/freedesktop/secrets/prompt/ID, completed by `latchkey unlock` through Latchkey's own
// interface io.github.latchkey.SecretService on the service object.
extension SecretServiceProvider {
    /// `Service.Unlock`: the objects that are unlocked, and a prompt for the others while the vault is locked.
    func unlock(_ objects: [String], for sender: String) -> [DBusValue] {
        let existing = objects.filter { collectionID($0) != nil || itemRef($0) != nil || isLockedPath($0) }
        let unlocked = existing.filter { !isLockedPath($0) }
        guard existing.count > unlocked.count else { return [.paths(unlocked), .objectPath(ObjectPath.nothing)] }
        let path = ObjectPath.prompt(id: "p\(nextPrompt)")
        nextPrompt += 1
        prompts[path] = PendingPrompt(owner: sender, objects: existing)
        return [.paths(unlocked), .objectPath(path)]
    }

    /// `Service.Lock`: forgets a passphrase vault's key (as `latchkey lock` does); a key-file vault locks nothing.
    func lock(_ objects: [String]) -> [DBusValue] {
        guard store.canLock, !store.isLocked else { return [.paths([]), .objectPath(ObjectPath.nothing)] }
        let locked = objects.filter { path in
            collectionID(path).map { store.collections[$0]?.persistent == true }
                ?? itemRef(path).map { store.collections[$0.collection]?.persistent == true } ?? false
        }
        lockVault()
        return [.paths(locked), .objectPath(ObjectPath.nothing)]
    }

    /// Forgets the vault's key and says which collections changed.
    func lockVault() {
        guard store.canLock, !store.isLocked else { return }
        let before = Set(store.collections.keys)
        for failure in store.lock() {
            log("secret service: an audit entry of \(failure.path) is not yet durable: \(failure.error.message)")
        }
        holds = []
        lockGeneration += 1
        collectionsChanged(before: before)
        log("secret service: the vault is locked")
    }

    /// Whether `path` names a collection or an item while the vault is locked. The `session`
    /// collection is locked with it: its calls are audited in the vault's trail, which a
    /// locked vault does not write.
    func isLockedPath(_ path: String) -> Bool {
        guard store.isLocked else { return false }
        switch ObjectPath(path) {
        case .item: return true
        case .collection, .alias: return collectionID(path) != nil
        default: return false
        }
    }

    /// A call on a prompt.
    func promptCall(_ call: MethodCall) throws(ProviderError) -> [DBusValue] {
        guard prompts[call.path] != nil else { throw .noSuchObject(call.path) }
        switch call.method {
        case "Prompt":
            guard prompts[call.path]?.shown == false else { return [] }
            prompts[call.path]?.shown = true
            let path = call.path
            bus.schedule(after: promptDeadline) { [weak self] in
                guard let self, self.prompts[path] != nil else { return }
                self.log("secret service: an unlock prompt was dismissed at the policy's deadline")
                self.complete(path, dismissed: true)
            }
            log("secret service: a client waits for the vault to be unlocked; run `latchkey unlock` in a terminal")
            return []
        case "Dismiss":
            complete(call.path, dismissed: true)
            return []
        default:
            throw .unknownMethod("no method \(call.method)")
        }
    }

    /// Ends a prompt with `Completed`: dismissed with no objects, or with the objects it unlocked.
    func complete(_ path: String, dismissed: Bool) {
        guard let prompt = prompts.removeValue(forKey: path) else { return }
        let unlocked = dismissed ? [] : prompt.objects.filter { collectionID($0) != nil || itemRef($0) != nil }
        bus.emit(path, "org.freedesktop.Secret.Prompt", "Completed", [.boolean(dismissed), .variant(.paths(unlocked))])
    }

    /// A call on Latchkey's own interface: `PendingPrompts` (the shown prompts that wait, and
    /// whether the vault is locked); its `Unlock` is ``startUnlock(_:)``.
    func latchkeyCall(_ call: MethodCall) throws(ProviderError) -> [DBusValue] {
        switch call.method {
        case "PendingPrompts":
            return [.paths(prompts.filter(\.value.shown).keys.sorted()), .boolean(store.isLocked)]
        default:
            throw .unknownMethod("no method \(call.method)")
        }
    }

    /// Latchkey's own `Unlock` (the passphrase, in the caller's session): the key derivation
    /// (Argon2id) runs on a thread of its own, so the bus keeps answering meanwhile, and the
    /// call is answered when it is done (``finishUnlock(_:reply:)``): nil then. One unlock runs at a time.
    func startUnlock(_ call: MethodCall) throws(ProviderError) -> Result<[DBusValue], ProviderError>? {
        let (passphrase, _) = try secretArgument(call.arguments.first ?? nil, sender: call.sender)
        guard store.isLocked else { return .success([.boolean(true), .paths([])]) }
        guard !unlocking else { throw .failed("another unlock is running; try again when it is done") }
        unlocking = true
        let opening = store.opening(passphrase: passphrase)
        let handoff = UnlockHandoff(provider: ProviderHandle(provider: self), reply: call.reply)
        do {
            try POSIX.startThread {
                let result = Result { try opening.open() }
                handoff.provider.provider.bus.schedule(after: 0) {
                    handoff.provider.provider.finishUnlock(result, reply: handoff.reply)
                }
            }
        } catch {
            unlocking = false
            throw .failed(error.message)
        }
        return nil
    }

    /// Ends an unlock on the provider's thread: a wrong passphrase is answered false; an open
    /// vault is taken, the waiting prompts are completed, and the vault is locked again after
    /// ``unlockDuration``; under 0, once each client whose prompt was completed has made its
    /// first call that needs the key (``holds``), or left, and at the prompt deadline at the latest.
    func finishUnlock(_ result: Result<ProviderStore.Opened, any Error>, reply: MethodReply) {
        unlocking = false
        let before = Set(store.collections.keys)
        do {
            try store.unlock(result.get())
        } catch let error as LatchkeyError where error.code == .wrongKey {
            log("secret service: a wrong passphrase was given to unlock the vault")
            reply.send(.success([.boolean(false), .paths([])]))
            return answered()
        } catch {
            return reply.send(.failure(.failed(error.message)))
        }
        collectionsChanged(before: before)
        lockGeneration += 1
        let generation = lockGeneration
        let waiting = prompts.filter(\.value.shown).keys.sorted()
        holds = unlockDuration == 0 ? Set(waiting.compactMap { prompts[$0]?.owner }) : []
        for path in waiting { complete(path, dismissed: false) }
        bus.schedule(after: unlockDuration == 0 && !holds.isEmpty ? promptDeadline : unlockDuration) { [weak self] in
            guard let self, self.lockGeneration == generation else { return }
            self.lockVault()
        }
        log(
            unlockDuration == 0
                ? "secret service: the vault is unlocked until the clients that waited have made their calls"
                : "secret service: the vault is unlocked for \(Int(unlockDuration)) s")
        reply.send(.success([.boolean(true), .paths(waiting)]))
        answered()
    }

    /// Lets go of `client`'s hold on the unlocked vault (``holds``): under an `unlockDuration`
    /// of 0 the vault is locked once no client holds it.
    func release(_ client: String) {
        guard holds.remove(client) != nil, holds.isEmpty, unlockDuration == 0 else { return }
        lockVault()
    }

    /// Serves the collections the store now has and no others, and says so with the signals.
    private func collectionsChanged(before: Set<String>) {
        syncRegistrations()
        let after = Set(store.collections.keys)
        for id in after.subtracting(before) {
            bus.emit(
                ObjectPath.base, "org.freedesktop.Secret.Service", "CollectionCreated",
                [.objectPath(ObjectPath.collection(id: id))])
        }
        for id in before.subtracting(after) {
            bus.emit(
                ObjectPath.base, "org.freedesktop.Secret.Service", "CollectionDeleted",
                [.objectPath(ObjectPath.collection(id: id))])
        }
        for id in after.intersection(before) where store.collections[id]?.persistent == true {
            let path = ObjectPath.collection(id: id)
            bus.emit(ObjectPath.base, "org.freedesktop.Secret.Service", "CollectionChanged", [.objectPath(path)])
            propertiesChanged(path, "org.freedesktop.Secret.Collection", ["Locked", "Items"])
        }
        propertiesChanged(ObjectPath.base, "org.freedesktop.Secret.Service", ["Collections"])
    }
}

/// What the thread of an unlock hands back to the provider's thread: the provider (used there
/// only) and the call's reply (sent there only).
private struct UnlockHandoff: @unchecked Sendable {
    let provider: ProviderHandle
    let reply: MethodReply
}
