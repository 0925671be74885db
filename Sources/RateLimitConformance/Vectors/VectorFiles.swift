import Foundation

/// Reading and writing vector files on disk.
public enum VectorFiles {
    /// Every vector file under `directory`: each `*.json` file, in its subfolders too, that
    /// declares `"format": "ratelimit-conformance-vectors"` (in sorted path order). Other JSON
    /// files (a schema, a saved `--json` report, the HTTP vectors) are ignored.
    ///
    /// - Throws: ``ConformanceFormatError`` when the directory holds no vector file at all, or
    ///   when a file is not valid JSON or not a valid vector file (the message names the file).
    public static func load(directory: String) throws(ConformanceFormatError) -> [VectorFile] {
        try scan(directory: directory).files
    }

    /// The vector files under `directory` (as ``load(directory:)`` reads them), the HTTP vector
    /// files (`"format": "ratelimit-http-vectors"`) and the scenario files (`"format":
    /// "ratelimit-scenario-vectors"`) with their paths relative to it, and the paths of the JSON
    /// files it ignored because they declare none of these formats.
    package static func scan(directory: String) throws(ConformanceFormatError) -> (
        files: [VectorFile], http: [(path: String, file: HTTPVectorFile)],
        scenarios: [(path: String, file: ScenarioVectorFile)], ignored: [String]
    ) {
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        guard manager.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ConformanceFormatError("no vector directory at \(directory)")
        }
        let paths = (manager.enumerator(atPath: directory)?.compactMap { $0 as? String } ?? [])
            .filter { $0.hasSuffix(".json") }
            .sorted()
        var files: [VectorFile] = []
        var http: [(path: String, file: HTTPVectorFile)] = []
        var scenarios: [(path: String, file: ScenarioVectorFile)] = []
        var ignored: [String] = []
        for path in paths {
            let full = (directory as NSString).appendingPathComponent(path)
            var isFolder: ObjCBool = false
            guard manager.fileExists(atPath: full, isDirectory: &isFolder), !isFolder.boolValue else { continue }
            guard let data = manager.contents(atPath: full) else {
                throw ConformanceFormatError("\(full): cannot read")
            }
            let json: JSONValue
            do {
                json = try JSONValue(parsing: String(decoding: data, as: UTF8.self))
            } catch {
                throw ConformanceFormatError("\(full): \(error)")
            }
            if HTTPVectorFile.declaresFormat(json) {
                do {
                    http.append((path, try HTTPVectorFile(json: json)))
                } catch {
                    throw ConformanceFormatError("\(full): \(error.message)")
                }
                continue
            }
            if ScenarioVectorFile.declaresFormat(json) {
                do {
                    scenarios.append((path, try ScenarioVectorFile(json: json)))
                } catch {
                    throw ConformanceFormatError("\(full): \(error.message)")
                }
                continue
            }
            guard VectorFile.declaresFormat(json) else {
                ignored.append(path)
                continue
            }
            do {
                files.append(try VectorFile(json: json))
            } catch {
                throw ConformanceFormatError("\(full): \(error.message)")
            }
        }
        guard !files.isEmpty else {
            let what =
                ignored.isEmpty ? "" : " (ignored, not declaring the vector format: \(ignored.joined(separator: ", ")))"
            throw ConformanceFormatError(
                "no vector files (*.json declaring \"format\": \"\(VectorFile.format)\") under \(directory)\(what)")
        }
        return (files, http, scenarios, ignored)
    }

    /// Writes the HTTP vector file into `directory` as ``HTTPVectorFile/path`` (folders created
    /// if needed), and returns the path written.
    package static func write(_ file: HTTPVectorFile, to directory: String) throws -> String {
        try write(file.json, at: HTTPVectorFile.path, in: directory)
    }

    /// Writes a scenario file into `directory` as its ``ScenarioVectorFile/path`` (folders created
    /// if needed), and returns the path written.
    package static func write(_ file: ScenarioVectorFile, to directory: String) throws -> String {
        try write(file.json, at: file.path, in: directory)
    }

    private static func write(_ json: JSONValue, at relativePath: String, in directory: String) throws -> String {
        let path = (directory as NSString).appendingPathComponent(relativePath)
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(json.prettyText.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Writes `files` into `directory` (created if needed), one `<strategy>.json` each, and
    /// returns the paths written.
    package static func write(_ files: [VectorFile], to directory: String) throws -> [String] {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var written: [String] = []
        for file in files {
            let path = (directory as NSString).appendingPathComponent(file.fileName)
            try Data(file.json.prettyText.utf8).write(to: URL(fileURLWithPath: path))
            written.append(path)
        }
        return written
    }
}
