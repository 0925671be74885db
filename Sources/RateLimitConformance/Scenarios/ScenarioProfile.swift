// A scenario within an implementation's profiles (CONF-7): the harness sends a scenario only when
// every instant and event of it lies within the profile of every strategy it involves (behind a
// composite, a wait queue or a registry's rules), as it sends random traces only within them, and
// only when the implementation declares every such strategy (an implementation of some strategies
// is asked composites of those). The others are not sent, and the report lists each with the first
// reason (NOT CHECKED).

extension ScenarioCase {
    /// Why this case lies outside the profiles `profile(strategy)` gives, or involves a strategy
    /// `declares` says the implementation does not have (the first step or configuration outside,
    /// in words), `nil` when it lies within them all.
    package func outsideProfile(
        _ profile: (String) -> ImplementationProfile, declares: (String) -> Bool = { _ in true }
    ) -> String? {
        var strategies: Set<String> = []
        Self.collectStrategies(configuration, into: &strategies)
        if case .story(_, let steps) = body {
            for step in steps { Self.collectStrategies(step.event, into: &strategies) }
        }
        if let missing = strategies.sorted().first(where: { !declares($0) }) {
            return "a limit of \(missing), a strategy the implementation does not declare"
        }
        // Adaptive machines involve no strategy: their scenarios have no profile to keep to.
        for strategy in strategies.sorted() {
            let declared = profile(strategy)
            guard declared != .full, let reason = outside(declared) else { continue }
            return "\(reason) (the profile of \(strategy))"
        }
        return nil
    }

    /// The first part of this case outside `profile`, in words.
    private func outside(_ profile: ImplementationProfile) -> String? {
        // Scenarios are judged exactly, from their creation: a tolerance or a state that begins at
        // the first event has no judge here yet.
        if profile.toleranceNanoseconds > 0 {
            return "a tolerance of \(profile.toleranceNanoseconds) ns (judged exactly)"
        }
        if profile.createdAtFirstEvent { return "a state that begins at the first event (created at creation here)" }
        let unit = profile.timeUnitNanoseconds
        let spans = profile.configurationUnitNanoseconds
        if spans > 1, let span = Self.spanOffUnit(configuration, unit: spans) {
            return "a span of \(span) ns, not a multiple of the configuration unit \(spans) ns"
        }
        guard case .story(let createdAt, let steps) = body else {
            // A refusal makes nothing: only a profile that validates configurations is asked it.
            return profile.validatesConfigurations ? nil : "a configuration the Spec refuses (no validation declared)"
        }
        if createdAt % unit != 0 { return "created at \(createdAt) ns, not a multiple of the time unit \(unit) ns" }
        if createdAt > profile.largestInstantNanoseconds {
            return "created at \(createdAt) ns, past the largest instant \(profile.largestInstantNanoseconds) ns"
        }
        var latest = createdAt
        for (index, step) in steps.enumerated() {
            let place = "step \(index + 1) at \(step.now) ns"
            if step.now % unit != 0 { return "\(place): an instant not a multiple of the time unit \(unit) ns" }
            if step.now > profile.largestInstantNanoseconds {
                return "\(place): past the largest instant \(profile.largestInstantNanoseconds) ns"
            }
            if profile.monotonic, step.now < latest { return "\(place): time goes backwards (a monotonic clock)" }
            latest = max(latest, step.now)
            if let event = Self.optionalEvent(step.event), !profile.events.contains(event) {
                return "\(place): \(event.rawValue), an event the profile does not declare"
            }
            if let permits = step.event["permits"]?.int64, profile.expressible(permits) != permits {
                return "\(place): \(permits) permits, past the largest \(profile.largestPermits) either way"
            }
            if spans > 1, let span = Self.spanOffUnit(step.event, unit: spans) {
                return "\(place): a span of \(span) ns, not a multiple of the configuration unit \(spans) ns"
            }
            // The other instants an event carries: a deadline, an arrival, a throttle's end.
            for member in ["deadline", "arrival", "until"] {
                guard let instant = step.event[member]?.int64 else { continue }
                if instant % unit != 0 {
                    return "\(place): a \(member) of \(instant) ns, not a multiple of the time unit"
                }
                if instant > profile.largestInstantNanoseconds {
                    return "\(place): a \(member) past the largest instant \(profile.largestInstantNanoseconds) ns"
                }
            }
            // A remaining above the largest permits cannot be told (random traces judge it capped).
            if let remaining = Self.largestRemaining(step.expected), remaining > profile.largestPermits {
                return "\(place): a remaining of \(remaining), past the largest permits \(profile.largestPermits)"
            }
        }
        return nil
    }

    /// The optional event (ImplementationProfile.Event) a scenario event is, `nil` for one every
    /// profile has (an acquire, try-acquire or availability of one permit, a release, an advance,
    /// a cancel, a close, the registry's own operations).
    private static func optionalEvent(_ event: JSONValue) -> ImplementationProfile.Event? {
        switch event["kind"]?.string {
        case "acquire", "tryAcquire", "availability":
            let permits = event["permits"]?.int64 ?? 1
            return permits == 0 ? .query : permits < 0 ? .invalid : permits > 1 ? .weighted : nil
        case "release": return (event["permits"]?.int64 ?? 1) < 0 ? .invalid : nil
        case "reset", "resetAll": return .reset
        case "reconfigure", "reconfigureRule", "restoreRule": return .reconfigure
        default: return nil
        }
    }

    /// The largest `"remaining"` anywhere in `json`, if any.
    private static func largestRemaining(_ json: JSONValue) -> Int64? {
        switch json {
        case .object(let members):
            return members.compactMap { key, value in key == "remaining" ? value.int64 : largestRemaining(value) }.max()
        case .array(let values):
            return values.compactMap(largestRemaining).max()
        case .null, .bool, .integer, .otherNumber, .string:
            return nil
        }
    }

    /// Every `"strategy"` named anywhere in `json`.
    private static func collectStrategies(_ json: JSONValue, into strategies: inout Set<String>) {
        switch json {
        case .object(let members):
            for (key, value) in members {
                if key == "strategy", let name = value.string { strategies.insert(name) }
                collectStrategies(value, into: &strategies)
            }
        case .array(let values):
            for value in values { collectStrategies(value, into: &strategies) }
        case .null, .bool, .integer, .otherNumber, .string:
            break
        }
    }

    /// A span (a member whose name ends in `Nanoseconds`) anywhere in `json` that is not a
    /// multiple of `unit`, if any.
    private static func spanOffUnit(_ json: JSONValue, unit: Int64) -> Int64? {
        switch json {
        case .object(let members):
            for (key, value) in members {
                if key.hasSuffix("Nanoseconds"), let span = value.int64, span % unit != 0 { return span }
                if let span = spanOffUnit(value, unit: unit) { return span }
            }
            return nil
        case .array(let values):
            return values.lazy.compactMap { spanOffUnit($0, unit: unit) }.first
        case .null, .bool, .integer, .otherNumber, .string:
            return nil
        }
    }
}
