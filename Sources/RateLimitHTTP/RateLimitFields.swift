// The IETF RateLimit-Policy and RateLimit fields (draft-ietf-httpapi-ratelimit-headers-10,
// Spec/HTTP.md HTTP-5).

/// One quota policy a server advertises in `RateLimit-Policy`.
public struct QuotaPolicy: Hashable, Sendable {
    /// The policy's name (a String, §3).
    public let name: String
    /// `q`: the quota, in quota units.
    public let quota: Int64
    /// `qu`: the quota unit (`requests` when absent).
    public let unit: String
    /// `w`: the window in seconds, if given.
    public let windowSeconds: Int64?
    /// `pk`: the partition key, as its base64 text, if given.
    public let partitionKey: String?
}

/// One service limit a server reports in `RateLimit`.
public struct ServiceLimit: Hashable, Sendable {
    /// The policy it refers to (a String; a Token is also read, as draft example B.3.1 sends one).
    public let name: String
    /// `r`: quota units remaining.
    public let remaining: Int64
    /// `t`: seconds from the response until more quota is available, if given.
    public let resetSeconds: Int64?
    /// `pk`: the partition key, as its base64 text, if given.
    public let partitionKey: String?
}

/// Why a field was ignored (HTTP-6): malformed fields are ignored, as the draft requires, and reported.
public struct FieldDiagnostic: Hashable, Sendable, CustomStringConvertible {
    /// The field's name.
    public let field: String
    /// The start of the value (at most 80 characters).
    public let value: String
    public let problem: String

    public init(field: String, value: String, problem: String) {
        self.field = field
        self.value = String(value.unicodeScalars.prefix(80))
        self.problem = problem
    }

    public var description: String { "\(field): \(problem) in \"\(value)\"" }
}

extension QuotaPolicy {
    /// Every policy of the `RateLimit-Policy` field, or the reason the whole field is ignored (HTTP-5).
    static func parse(_ value: String) -> Result<[QuotaPolicy], FieldProblem> {
        guard let members = parseStructuredList(value) else { return .failure("not a structured list") }
        var policies: [QuotaPolicy] = []
        for member in members {
            guard case .item(let item) = member else { return .failure("an inner list") }
            guard case .string(let name) = item.value else { return .failure("a policy name that is not a string") }
            guard case .integer(let quota)? = item["q"], quota >= 0 else {
                return .failure("no non-negative integer q")
            }
            var unit = "requests"
            if let given = item["qu"] {
                guard case .string(let text) = given else { return .failure("a qu that is not a string") }
                unit = text
            }
            var window: Int64?
            if let given = item["w"] {
                guard case .integer(let seconds) = given, seconds >= 1 else {
                    return .failure("a w that is not a positive integer")
                }
                window = seconds
            }
            var partition: String?
            if let given = item["pk"] {
                guard case .byteSequence(let key) = given else { return .failure("a pk that is not a byte sequence") }
                partition = key
            }
            policies.append(
                QuotaPolicy(name: name, quota: quota, unit: unit, windowSeconds: window, partitionKey: partition))
        }
        return .success(policies)
    }
}

extension ServiceLimit {
    /// Every limit of the `RateLimit` field, or the reason the whole field is ignored (HTTP-5).
    static func parse(_ value: String) -> Result<[ServiceLimit], FieldProblem> {
        guard let members = parseStructuredList(value) else { return .failure("not a structured list") }
        var limits: [ServiceLimit] = []
        for member in members {
            guard case .item(let item) = member else { return .failure("an inner list") }
            let name: String
            switch item.value {
            case .string(let text), .token(let text): name = text
            case .integer, .decimal, .byteSequence, .boolean, .date, .displayString:
                return .failure("a policy name that is not a string")
            }
            guard case .integer(let remaining)? = item["r"], remaining >= 0 else {
                return .failure("no non-negative integer r")
            }
            var reset: Int64?
            if let given = item["t"] {
                guard case .integer(let seconds) = given, seconds >= 0 else {
                    return .failure("a t that is not a non-negative integer")
                }
                reset = seconds
            }
            var partition: String?
            if let given = item["pk"] {
                guard case .byteSequence(let key) = given else { return .failure("a pk that is not a byte sequence") }
                partition = key
            }
            limits.append(ServiceLimit(name: name, remaining: remaining, resetSeconds: reset, partitionKey: partition))
        }
        return .success(limits)
    }
}

/// Why a field is ignored, in words.
struct FieldProblem: Error, ExpressibleByStringLiteral {
    let text: String
    init(stringLiteral text: String) { self.text = text }
}
