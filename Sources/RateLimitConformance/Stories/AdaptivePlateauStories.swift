import RateLimitCore

// Spec/AdaptiveLimits.md ADAPT-4, ADAPT-5: the adaptive rate's plateau, told round by round: held
// a margin below the rate refused, probed one rate above it, raised by a probe served. Every
// answer below is worked out by hand from the clauses.

extension ScenarioCatalogue {
    /// The steps of a story of the adaptive rate at burst 1, one response per ns from `now`.
    private struct RoundWriter {
        var steps: [(Int64, JSONValue, JSONValue, String)]
        var now: Int64

        /// A round of `limit` served responses, the last answered `answer` (`note`).
        mutating func round(of limit: Int64, _ answer: JSONValue, _ note: String) {
            for served in 1..<limit {
                steps.append((now, response(200), rate(limit, 1, .unchanged), "\(served) of \(limit)"))
                now += 1
            }
            steps.append((now, response(200), answer, note))
            now += 1
        }

        /// `count` rounds held at `limit`, each answered unchanged.
        mutating func held(_ count: Int, at limit: Int64, of hold: Int) {
            for held in 1...count {
                round(of: limit, rate(limit, 1, .unchanged), "round \(held) of \(hold) held at \(limit)")
            }
        }

        /// `count` rounds of a probe at `limit`, each answered unchanged.
        mutating func probing(_ count: Int, at limit: Int64) {
            for probed in 1...count {
                round(of: limit, rate(limit, 1, .unchanged), "probing, round \(probed): the probe holds its rate")
            }
        }

        /// From 2 per 100 ns in bursts of 2, +1 a round, no cool-down, one response per ns: a round,
        /// a measured refusal, and the plateau 2 held 7 rounds of its 8.
        static func atAPlateauOf2() -> RoundWriter {
            var story = RoundWriter(
                steps: [
                    (0, response(200), rate(2, 2, .unchanged), "1 of 2"),
                    (1, response(200), rate(3, 2, .increased), "2 in Δ = 1: + a₀ (1); measured 200"),
                    (
                        2, response(429), rate(2, 1, .decreased),
                        "⌊min(3, 200)·0.9⌋ = 2; the plateau min(3 − 1, ⌊3·0.95⌋) = 2, held 8 rounds; 2 served ≤ 2: the burst 1"
                    ),
                ], now: 3)
            story.held(7, at: 2, of: 8)
            return story
        }

        /// A refusal answered `answer` (`note`).
        mutating func refused(_ answer: JSONValue, _ note: String) {
            steps.append((now, response(429), answer, note))
            now += 1
        }
    }

    /// ADAPT-4, ADAPT-5: after a measured refusal the rate holds at the plateau for 8 rounds,
    /// probes one step above it, goes straight back when the probe is refused and then holds twice
    /// as long; a probe served for 8 rounds raises the plateau to it, and the next probe goes twice
    /// as far above; a refused probe, and a measured refusal, set the reach back to one step.
    static func plateauStory(_ machine: ScenarioMachine) -> ScenarioCase {
        // Per 100 ns: from 2 (1 … 20), bursts of 2, +1 per round, no cool-down; one response per ns.
        let configuration = adaptiveRate(
            maximum: 20, initial: 2, minimum: 1, burst: 2, start: 1, increase: 1, coolDown: 0)
        var story = RoundWriter.atAPlateauOf2()
        story.round(of: 2, rate(3, 1, .increased), "8 rounds held: a probe, 2 + 1")
        story.probing(1, at: 3)
        story.refused(rate(2, 1, .decreased), "the probe refused: back to the plateau 2; hold 16")
        story.held(15, at: 2, of: 16)
        story.round(of: 2, rate(3, 1, .increased), "16 rounds held: the next probe, 2 + 1")
        story.probing(7, at: 3)
        story.round(
            of: 3, rate(3, 1, .unchanged), "served 8 rounds: the plateau rises to 3; the next probe goes 2 above")
        story.held(15, at: 3, of: 16)
        story.round(of: 3, rate(5, 1, .increased), "16 rounds held: a probe, 3 + 2")
        story.refused(rate(3, 1, .decreased), "the probe refused: back to 3; hold 32, the next probe 1 above")
        story.held(31, at: 3, of: 32)
        story.round(of: 3, rate(4, 1, .increased), "32 rounds held: a probe, 3 + 1")
        story.probing(7, at: 4)
        story.round(
            of: 4, rate(4, 1, .unchanged), "served 8 rounds: the plateau rises to 4; the next probe goes 2 above")
        story.refused(
            rate(3, 1, .decreased),
            "the plateau refused, not a probe: measured 4 in Δ = 3, ⌊min(4, 133)·0.9⌋ = 3; the plateau min(4 − 1, ⌊4·0.95⌋) = 3, held 8 rounds, the next probe 1 above"
        )
        story.held(7, at: 3, of: 8)
        story.round(of: 3, rate(4, 1, .increased), "8 rounds held: a probe, 3 + 1")
        return self.story(
            machine, "plateau",
            "after a measured refusal the rate holds a margin below it and probes one rate above it, half as often after each refused probe; a probe served raises it",
            clauses: ["ADAPT-3", "ADAPT-4", "ADAPT-5"], configuration, story.steps)
    }

    /// ADAPT-4, ADAPT-5: at the ceiling a plateau has nothing above it to probe: the hold ends with
    /// no probe, and a refusal there is the plateau's, measured, not a probe's.
    static func plateauAtTheCeilingStory(_ machine: ScenarioMachine) -> ScenarioCase {
        // Per 100 ns: from 2 (1 … 3), bursts of 2, +1 per round, no cool-down; one response per ns.
        let configuration = adaptiveRate(
            maximum: 3, initial: 2, minimum: 1, burst: 2, start: 1, increase: 1, coolDown: 0)
        var story = RoundWriter.atAPlateauOf2()
        story.round(of: 2, rate(3, 1, .increased), "8 rounds held: a probe, min(3, 2 + 1)")
        story.probing(7, at: 3)
        story.round(of: 3, rate(3, 1, .unchanged), "served 8 rounds: the plateau rises to 3, the ceiling")
        story.held(7, at: 3, of: 8)
        story.round(of: 3, rate(3, 1, .unchanged), "8 rounds held: min(3, 3 + 2) = 3 is no probe above the plateau")
        story.refused(
            rate(2, 1, .decreased),
            "not probing: measured 3 in Δ = 2, ⌊min(3, 150)·0.9⌋ = 2; the plateau min(3 − 1, ⌊3·0.95⌋) = 2")
        return self.story(
            machine, "plateau-at-the-ceiling",
            "a plateau at the ceiling is not probed above, and a refusal there decreases as a measured one",
            clauses: ["ADAPT-4", "ADAPT-5"], configuration, story.steps)
    }
}
