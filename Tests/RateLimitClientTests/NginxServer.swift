import Foundation
import RedisTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// nginx (Debian's `nginx-light`) for one test, on a free port of 127.0.0.1: `/limited` is a
/// static file behind `limit_req` (`rate` requests per second, `burst` more, `nodelay` or queued),
/// a refusal is a 429 with `Retry-After: 1`, and every request is logged with its instant (ms), its
/// status and its `id` query parameter. A server nobody here wrote: its access log, not the
/// client's counts, says what it admitted. `/limited/<id>` is the same file behind the same limit,
/// for an S3 client (bucket `limited`, key `<id>`): the AWS SDK's adaptive mode, which recognises a
/// throttling error by its code, so a refusal's body is S3's `SlowDown` error (botocore_client.py).
final class NginxServer: LearningServer {
    /// The nginx executable, or nil: the tests that need it are skipped.
    static let executable: String? = ["/usr/sbin/nginx", "/usr/bin/nginx"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }
    static let installHint = "nginx is not installed: apt-get install nginx-light (.ci/run installs it)"

    let session: URLSession
    let rate: Int64
    private let process = Process()
    private let port: Int
    private let directory: String

    init(rate: Int64, burst: Int64, nodelay: Bool) throws {
        guard let executable = Self.executable else { throw NginxFailure(Self.installHint) }
        self.rate = rate
        port = try unusedPort()
        directory = (NSTemporaryDirectory() as NSString).appendingPathComponent("ratelimit-nginx-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: "\(directory)/www", withIntermediateDirectories: true)
        try Data("ok\n".utf8).write(to: URL(fileURLWithPath: "\(directory)/www/limited"))
        let configuration = """
            worker_processes 1;
            pid \(directory)/nginx.pid;
            error_log \(directory)/error.log warn;
            events { worker_connections 1024; }
            http {
                client_body_temp_path \(directory)/body;
                proxy_temp_path \(directory)/proxy;
                fastcgi_temp_path \(directory)/fastcgi;
                uwsgi_temp_path \(directory)/uwsgi;
                scgi_temp_path \(directory)/scgi;
                map $uri $key_id { ~^/limited/(?<key>[0-9]+)$ $key; default ""; }
                log_format arrivals '$msec $status $arg_id$key_id';
                access_log \(directory)/access.log arrivals;
                limit_req_zone $binary_remote_addr zone=limited:1m rate=\(rate)r/s;
                limit_req_status 429;
                server {
                    listen 127.0.0.1:\(port);
                    keepalive_requests 100000;
                    location ^~ /limited {
                        limit_req zone=limited burst=\(burst)\(nodelay ? " nodelay" : "");
                        error_page 429 = @refused;
                        root \(directory)/www;
                        try_files /limited =404;
                        default_type text/plain;
                    }
                    location @refused {
                        add_header Retry-After 1 always;
                        default_type application/xml;
                        return 429 '<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>refused</Message></Error>';
                    }
                }
            }
            """
        try Data(configuration.utf8).write(to: URL(fileURLWithPath: "\(directory)/nginx.conf"))
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = [
            "-p", directory, "-c", "\(directory)/nginx.conf", "-e", "\(directory)/error.log", "-g", "daemon off;",
        ]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.timeoutIntervalForRequest = 20
        sessionConfiguration.httpMaximumConnectionsPerHost = 64
        session = URLSession(configuration: sessionConfiguration)
        // Its start is real time passing (pauseForARealServer says why that is the exception).
        // nginx writes its pid file once it has bound its port, so that a port another server took
        // between `unusedPort` and this start (tests start several at once) is not mistaken for
        // this one's: that nginx exits instead.
        let deadline = Date().addingTimeInterval(30)
        while !(FileManager.default.fileExists(atPath: "\(directory)/nginx.pid") && portAccepts(port)) {
            guard process.isRunning, Date() < deadline else {
                let log = (try? String(contentsOfFile: "\(directory)/error.log", encoding: .utf8)) ?? ""
                stop()
                throw NginxFailure("nginx did not start: \(log)")
            }
            pauseForARealServer()
        }
    }

    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    /// What nginx logged: every request's instant, status and id, in the log's order, as the
    /// Python server's statistics (a 429's Retry-After is 1 s; a retry of an id less than 1 s after
    /// its refusal is early, by the log's milliseconds). Read once nginx has quit: it writes a
    /// request's line after sending its response, so a client done with its last response could
    /// read the log before that line was there (a loaded machine did: one request of 300 missing).
    /// A graceful quit (SIGQUIT) ends every request, its line written, before nginx exits.
    func stats() async throws -> ServerStats {
        if process.isRunning {
            kill(process.processIdentifier, SIGQUIT)
            process.waitUntilExit()
        }
        let text = try String(contentsOfFile: "\(directory)/access.log", encoding: .utf8)
        var arrivals: [[Int64]] = []
        var ids: [String] = []
        var early: [String] = []
        var refusedAt: [String: Int64] = [:]
        var first: Int64?
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 3, let status = Int64(fields[1]) else { continue }
            let parts = fields[0].split(separator: ".")
            guard parts.count == 2, let seconds = Int64(parts[0]), let millis = Int64(parts[1]) else { continue }
            let instant = seconds * 1_000_000_000 + millis * 1_000_000
            let origin = first ?? instant
            first = origin
            let id = String(fields[2])
            if let refused = refusedAt[id], instant < refused + 1_000_000_000 { early.append(id) }
            refusedAt[id] = status == 429 ? instant : nil
            arrivals.append([instant - origin, status, status == 429 ? 1_000_000_000 : 0])
            ids.append(id)
        }
        let admittedIDs = zip(arrivals, ids).filter { $0.0[1] == 200 }.map(\.1)
        return ServerStats(
            admitted: admittedIDs.count, refused: arrivals.count { $0[1] == 429 }, early: early,
            admittedIDs: admittedIDs, arrivals: arrivals, arrivalIDs: ids,
            slow: .init(served: 0, refused: 0, servedIDs: [], samples: []))
    }

    /// Stops nginx, waits for it to exit and removes its folder.
    func stop() {
        session.invalidateAndCancel()
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: directory)
    }

    struct NginxFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
