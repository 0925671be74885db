import Foundation

/// Reading and writing vector files on disk.
public enum VectorFiles {
    /// Every `*.json` vector file under `directory` (recursively, in sorted path order).
    ///
    /// - Throws: ``ConformanceFormatError`` when the directory holds no vector file at all, or
    ///   when a file is not valid JSON or not a valid vector file (the message names the file).
    public static func load(directory: String) throws(ConformanceFormatError) -> [VectorFile] {
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        guard manager.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ConformanceFormatError("no vector directory at \(directory)")
        }
        let paths = (manager.enumerator(atPath: directory)?.compactMap { $0 as? String } ?? [])
            .filter { $0.hasSuffix(".json") && !$0.hasSuffix("schema.json") }
            .sorted()
        guard !paths.isEmpty else { throw ConformanceFormatError("no vector files (*.json) under \(directory)") }
        var files: [VectorFile] = []
        for path in paths {
            let full = (directory as NSString).appendingPathComponent(path)
            guard let data = manager.contents(atPath: full) else {
                throw ConformanceFormatError("\(full): cannot read")
            }
            do {
                files.append(try VectorFile(json: try JSONValue(parsing: String(decoding: data, as: UTF8.self))))
            } catch let error as JSONParseError {
                throw ConformanceFormatError("\(full): \(error)")
            } catch let error as ConformanceFormatError {
                throw ConformanceFormatError("\(full): \(error.message)")
            } catch {
                throw ConformanceFormatError("\(full): \(error)")
            }
        }
        return files
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
