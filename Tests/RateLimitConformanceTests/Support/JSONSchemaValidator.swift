import RateLimitConformance

/// The subset of JSON Schema (draft 2020-12) the Spec's schemas use: `type`, `const`, `enum`,
/// `properties`, `required`, `additionalProperties`, `propertyNames`, `minProperties`, `items`,
/// `minItems`, `maxItems`, `uniqueItems`, `minimum`, `maximum`, `minLength`, `oneOf`, and `$ref` to `#/$defs/...` or to another file's
/// `$defs` (`vectors/schema.json#/$defs/...`). A keyword it does not know makes validation fail,
/// so a schema can never silently check less than it says.
struct JSONSchemaValidator {
    /// Schemas by the path other schemas use to refer to them ("" is the root schema).
    let documents: [String: JSONValue]

    init(root: JSONValue, others: [String: JSONValue] = [:]) {
        var documents = others
        documents[""] = root
        self.documents = documents
    }

    /// Every violation of `value` against the root schema, as "path: problem" lines.
    func violations(of value: JSONValue) -> [String] {
        var found: [String] = []
        validate(value, against: documents[""] ?? .null, document: "", path: "$", into: &found)
        return found
    }

    private static let known: Set<String> = [
        "$schema", "$id", "title", "description", "$defs", "type", "const", "enum", "properties", "required",
        "additionalProperties", "propertyNames", "minProperties", "items", "minItems", "maxItems", "uniqueItems",
        "minimum",
        "maximum",
        "minLength", "pattern", "oneOf", "anyOf", "$ref",
    ]

    private func resolve(_ reference: String, from document: String) -> (JSONValue, String)? {
        let parts = reference.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
        let file = parts.first.map(String.init) ?? ""
        let target = file.isEmpty ? document : file
        guard var node = documents[target] else { return nil }
        let pointer = parts.count > 1 ? String(parts[1]) : ""
        for component in pointer.split(separator: "/") {
            guard let next = node[String(component)] else { return nil }
            node = next
        }
        return (node, target)
    }

    private func validate(
        _ value: JSONValue, against schema: JSONValue, document: String, path: String, into found: inout [String]
    ) {
        for key in schema.keys where !Self.known.contains(key) {
            found.append("\(path): unsupported schema keyword \(key)")
        }
        if let reference = schema["$ref"]?.string {
            guard let (target, targetDocument) = resolve(reference, from: document) else {
                found.append("\(path): unresolved $ref \(reference)")
                return
            }
            validate(value, against: target, document: targetDocument, path: path, into: &found)
        }
        if let type = schema["type"]?.string, !Self.has(value, type: type) {
            found.append("\(path): expected \(type), got \(value.compactText.prefix(60))")
            return
        }
        if let constant = schema["const"], constant != value {
            found.append("\(path): expected \(constant.compactText)")
        }
        if let choices = schema["enum"]?.array, !choices.contains(value) {
            found.append("\(path): \(value.compactText) not in enum")
        }
        if case .integer(let number) = value {
            if let minimum = schema["minimum"]?.int64, number < minimum {
                found.append("\(path): \(number) < minimum \(minimum)")
            }
            if let maximum = schema["maximum"]?.int64, number > maximum {
                found.append("\(path): \(number) > maximum \(maximum)")
            }
        }
        if case .string(let text) = value, let pattern = schema["pattern"]?.string {
            if let regex = try? Regex(pattern) {
                if !text.contains(regex) { found.append("\(path): \"\(text.prefix(60))\" does not match \(pattern)") }
            } else {
                found.append("\(path): the schema's pattern \(pattern) is not a regular expression")
            }
        }
        if case .string(let text) = value, let minimum = schema["minLength"]?.int64, text.count < minimum {
            found.append("\(path): shorter than \(minimum)")
        }
        if case .array(let items) = value {
            if let minimum = schema["minItems"]?.int64, items.count < minimum {
                found.append("\(path): fewer than \(minimum) items")
            }
            if let maximum = schema["maxItems"]?.int64, items.count > maximum {
                found.append("\(path): more than \(maximum) items")
            }
            if schema["uniqueItems"] == .bool(true), Set(items).count != items.count {
                found.append("\(path): items repeat")
            }
            if let itemSchema = schema["items"] {
                for (index, item) in items.enumerated() {
                    validate(item, against: itemSchema, document: document, path: "\(path)[\(index)]", into: &found)
                }
            }
        }
        if case .object(let members) = value {
            if let minimum = schema["minProperties"]?.int64, members.count < minimum {
                found.append("\(path): fewer than \(minimum) members")
            }
            for name in schema["required"]?.array?.compactMap(\.string) ?? [] where value[name] == nil {
                found.append("\(path): missing \(name)")
            }
            let properties = schema["properties"]
            if let names = schema["propertyNames"] {
                for (name, _) in members {
                    validate(
                        .string(name), against: names, document: document, path: "\(path) name \(name)", into: &found)
                }
            }
            for (name, member) in members {
                if let propertySchema = properties?[name] {
                    validate(member, against: propertySchema, document: document, path: "\(path).\(name)", into: &found)
                } else if let additional = schema["additionalProperties"] {
                    if additional == .bool(false) {
                        found.append("\(path): unexpected member \(name)")
                    } else if case .object = additional {
                        validate(member, against: additional, document: document, path: "\(path).\(name)", into: &found)
                    }
                }
            }
        }
        if let alternatives = schema["oneOf"]?.array {
            let matching = alternatives.filter { alternative in
                var inner: [String] = []
                validate(value, against: alternative, document: document, path: path, into: &inner)
                return inner.isEmpty
            }
            if matching.count != 1 {
                found.append("\(path): matches \(matching.count) of the oneOf alternatives, not exactly 1")
            }
        }
        if let alternatives = schema["anyOf"]?.array,
            !alternatives.contains(where: { alternative in
                var inner: [String] = []
                validate(value, against: alternative, document: document, path: path, into: &inner)
                return inner.isEmpty
            })
        {
            found.append("\(path): matches none of the anyOf alternatives")
        }
    }

    private static func has(_ value: JSONValue, type: String) -> Bool {
        switch (type, value) {
        case ("object", .object), ("array", .array), ("string", .string), ("integer", .integer), ("boolean", .bool),
            ("null", .null):
            true
        case ("number", .integer), ("number", .otherNumber): true
        default: false
        }
    }
}
