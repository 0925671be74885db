import Foundation

/// Whether `condition` holds before 10 s have passed, asking again after each `Task.yield()`:
/// for what another task or a real server does on its own time (a sleeper appears on a manual
/// clock, a process ends). Time itself is never waited for this way.
public func eventually(_ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(10)
    while !(await condition()) {
        guard ContinuousClock.now < deadline else { return false }
        await Task.yield()
    }
    return true
}

/// The repository's root folder, found from this file's location.
public let repositoryRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
