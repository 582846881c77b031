import Latchkey

/// `audit show|verify|reset`.
enum AuditCommands {
    static func show(_ context: StoreContext, since: UInt64?) throws {
        let entries = try context.openVault().auditEntries(since: since)
        var objects: [JSONOutput] = []
        for entry in entries {
            let outcome = entry.outcome.errorCode.map { "\(entry.outcome.name)(\($0))" } ?? entry.outcome.name
            var text = "\(entry.sequence)\t\(entry.timeText)\t\(entry.event)\t\(outcome)\t\(entry.backend)"
            if let account = entry.account { text += "\taccount \(account)" }
            if let detail = entry.detail { text += "\t\(TextEscaping.escaped(detail))" }
            try context.output.line(text)
            objects.append(
                .object([
                    ("seq", .integer(Int64(entry.sequence))), ("time", .string(entry.timeText)),
                    ("event", .string(entry.event.rawValue)),
                    ("outcome", .string(entry.outcome.name)), ("error", .string(entry.outcome.errorCode?.rawValue)),
                    ("backend", .string(entry.backend.rawValue)), ("account", .string(entry.account)),
                    ("detail", .string(entry.detail)),
                ]))
        }
        context.output.set("entries", .array(objects))
    }

    static func verify(_ context: StoreContext) throws {
        var trails: [JSONOutput] = []
        var firstBreak: LatchkeyError?
        let vault = try context.openVault()
        for trail in try vault.verifyAudit() {
            let path = trail.path
            switch trail.verification {
            case .intact(let count, let last):
                try context.output.line(
                    "\(path): intact, \(count) entr\(count == 1 ? "y" : "ies"), last sequence \(last)")
                trails.append(
                    .object([
                        ("path", .string(path)), ("intact", .bool(true)),
                        ("entries", .integer(count)), ("lastSequence", .integer(Int64(last))),
                    ]))
            case .broken(let sequence, let reason):
                try context.output.line("\(path): BROKEN at sequence \(sequence): \(reason)")
                trails.append(
                    .object([
                        ("path", .string(path)), ("intact", .bool(false)),
                        ("sequence", .integer(Int64(sequence))), ("reason", .string(reason)),
                    ]))
                if firstBreak == nil {
                    firstBreak = LatchkeyError(
                        .tampered, "the audit trail \(path) was altered: first bad sequence \(sequence): \(reason)")
                }
            }
        }
        // Every reset is part of what verifying reports, those in the segments later resets kept
        // included: the chain each started is intact, the gap is not hidden.
        var resets: [JSONOutput] = []
        for entry in try vault.auditResets() {
            try context.output.line("reset at \(entry.timeText) (\(entry.backend) trail): \(entry.detail ?? "")")
            resets.append(
                .object([
                    ("time", .string(entry.timeText)), ("backend", .string(entry.backend.rawValue)),
                    ("detail", .string(entry.detail ?? "")),
                ]))
        }
        context.output.set("intact", .bool(firstBreak == nil))
        context.output.set("trails", .array(trails))
        context.output.set("resets", .array(resets))
        if let firstBreak { throw firstBreak }
    }

    static func reset(_ context: StoreContext, confirmed: Bool) throws {
        let appID = try context.appID()
        guard confirmed else {
            try context.output.line("cancelled: nothing was reset")
            context.output.set("reset", .array([]))
            return
        }
        let reports = try context.openVault().resetAuditTrail()
        if reports.isEmpty { try context.output.line("every audit trail of \(appID) verifies; nothing was reset") }
        var objects: [JSONOutput] = []
        for report in reports {
            try context.output.line(
                "\(report.trailPath): reset; the old trail is kept as \(report.keptSegment ?? "(there was none)"), last verified sequence \(report.lastVerifiedSequence): \(report.reason)"
            )
            objects.append(
                .object([
                    ("path", .string(report.trailPath)), ("kept", report.keptSegment.map { .string($0) } ?? .null),
                    ("lastVerifiedSequence", .integer(Int64(report.lastVerifiedSequence))),
                    ("reason", .string(report.reason)),
                ]))
        }
        context.output.set("reset", .array(objects))
    }
}
