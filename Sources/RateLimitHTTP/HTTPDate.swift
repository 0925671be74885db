// HTTP-date (RFC 9110 §5.6.7, Spec/HTTP.md HTTP-2): the three formats a recipient must accept,
// to whole seconds since the Unix epoch, by integer calendar arithmetic (no Foundation, no time
// zones: HTTP-dates are always GMT).

/// An HTTP-date: whole seconds since 1970-01-01T00:00:00Z (negative before it).
public struct HTTPDate: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let secondsSinceEpoch: Int64

    public init(secondsSinceEpoch: Int64) {
        self.secondsSinceEpoch = secondsSinceEpoch
    }

    public static func < (lhs: HTTPDate, rhs: HTTPDate) -> Bool { lhs.secondsSinceEpoch < rhs.secondsSinceEpoch }

    /// The first and last instants IMF-fixdate can write (years 0000 and 9999).
    public static let earliestWritable = HTTPDate(secondsSinceEpoch: -62_167_219_200)
    public static let latestWritable = HTTPDate(secondsSinceEpoch: 253_402_300_799)

    /// The IMF-fixdate form, e.g. `Sun, 06 Nov 1994 08:49:37 GMT`. IMF-fixdate has four-digit
    /// years: a date before year 0 or after year 9999 is written as the nearest of
    /// ``earliestWritable`` and ``latestWritable`` (HTTP-2).
    public var description: String {
        let clamped = min(
            max(secondsSinceEpoch, Self.earliestWritable.secondsSinceEpoch), Self.latestWritable.secondsSinceEpoch)
        let days = floorDivide(clamped, 86_400)
        let seconds = floorModulo(clamped, 86_400)
        let (year, month, day) = Self.civil(fromDays: days)
        let weekday = Self.dayNames[Int(floorModulo(days, 7))]
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let yearText = String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
        return
            "\(weekday), \(two(day)) \(Self.monthNames[Int(month) - 1]) \(yearText) \(two(seconds / 3_600)):\(two(seconds / 60 % 60)):\(two(seconds % 60)) GMT"
    }

    /// Parses an IMF-fixdate, an RFC 850 date or an asctime date (HTTP-2); `nil` when the value
    /// matches none. An RFC 850 two-digit year is the year with those last two digits that is not
    /// more than 50 years after `reference` (RFC 9110 §5.6.7), a reference outside the years
    /// 0000–9999 counting as the nearest end of them.
    public init?(_ value: some StringProtocol, reference: HTTPDate) {
        let bytes = Array(value.utf8)
        guard let parsed = Self.imfFixdate(bytes) ?? Self.rfc850(bytes, reference: reference) ?? Self.asctime(bytes)
        else { return nil }
        self = parsed
    }

    /// Day names from Thursday, the weekday of 1970-01-01 (day 0).
    static let dayNames = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
    static let longDayNames = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private static let dayNameBytes = dayNames.map { Array($0.utf8) }
    private static let longDayNameBytes = longDayNames.map { Array($0.utf8) }
    private static let monthNameBytes = monthNames.map { Array($0.utf8) }
    private static let gmt = Array("GMT".utf8)

    // MARK: The three formats

    /// `Sun, 06 Nov 1994 08:49:37 GMT`
    private static func imfFixdate(_ b: [UInt8]) -> HTTPDate? {
        guard b.count == 29, shortDay(b[0..<3]), b[3] == UInt8(ascii: ","), b[4] == 32, b[7] == 32, b[11] == 32,
            b[16] == 32,
            b[25] == 32, b[26...].elementsEqual(gmt),
            let day = digits(b[5..<7]), let month = month(b[8..<11]), let year = digits(b[12..<16]),
            let time = timeOfDay(b[17..<25])
        else { return nil }
        return make(year: year, month: month, day: day, time: time)
    }

    /// `Sunday, 06-Nov-94 08:49:37 GMT`
    private static func rfc850(_ b: [UInt8], reference: HTTPDate) -> HTTPDate? {
        guard let comma = b.firstIndex(of: UInt8(ascii: ",")), comma <= 9,
            longDayNameBytes.contains(where: { $0.elementsEqual(b[..<comma]) })
        else {
            return nil
        }
        let rest = Array(b[(comma + 1)...])
        guard rest.count == 23, rest[0] == 32, rest[3] == UInt8(ascii: "-"), rest[7] == UInt8(ascii: "-"),
            rest[10] == 32, rest[19] == 32,
            rest[20...].elementsEqual(gmt),
            let day = digits(rest[1..<3]), let month = month(rest[4..<7]), let twoDigits = digits(rest[8..<10]),
            let time = timeOfDay(rest[11..<19])
        else { return nil }
        // The most recent year with these last two digits that is not more than 50 years ahead
        // of the reference year (taken within 0000–9999, so the result is always representable).
        let referenceYear = min(max(civil(fromDays: floorDivide(reference.secondsSinceEpoch, 86_400)).year, 0), 9_999)
        var year = referenceYear - floorModulo(referenceYear, 100) + twoDigits
        if year > referenceYear + 50 { year -= 100 }
        if year < referenceYear - 49 { year += 100 }
        return make(year: year, month: month, day: day, time: time)
    }

    /// `Sun Nov  6 08:49:37 1994`
    private static func asctime(_ b: [UInt8]) -> HTTPDate? {
        guard b.count == 24, shortDay(b[0..<3]), b[3] == 32, b[7] == 32, b[10] == 32, b[19] == 32,
            let month = month(b[4..<7]), let time = timeOfDay(b[11..<19]), let year = digits(b[20..<24])
        else { return nil }
        let day: Int64?
        if b[8] == 32 { day = digits(b[9..<10]) } else { day = digits(b[8..<10]) }
        guard let day else { return nil }
        return make(year: year, month: month, day: day, time: time)
    }

    // MARK: Pieces

    private static func shortDay(_ bytes: ArraySlice<UInt8>) -> Bool {
        dayNameBytes.contains { $0.elementsEqual(bytes) }
    }

    private static func month(_ bytes: ArraySlice<UInt8>) -> Int64? {
        monthNameBytes.firstIndex { $0.elementsEqual(bytes) }.map { Int64($0) + 1 }
    }

    private static func digits(_ bytes: ArraySlice<UInt8>) -> Int64? {
        var value: Int64 = 0
        for byte in bytes {
            guard byte >= 48, byte <= 57 else { return nil }
            value = value * 10 + Int64(byte - 48)
        }
        return bytes.isEmpty ? nil : value
    }

    /// `08:49:37`: seconds into the day; second 60 (a leap second) is accepted as the next second.
    private static func timeOfDay(_ b: ArraySlice<UInt8>) -> Int64? {
        let b = Array(b)
        guard b.count == 8, b[2] == UInt8(ascii: ":"), b[5] == UInt8(ascii: ":"),
            let hour = digits(b[0..<2]), let minute = digits(b[3..<5]), let second = digits(b[6..<8]),
            hour < 24, minute < 60, second <= 60
        else { return nil }
        return hour * 3_600 + minute * 60 + second
    }

    private static func make(year: Int64, month: Int64, day: Int64, time: Int64) -> HTTPDate? {
        guard day >= 1, day <= daysIn(month: month, year: year) else { return nil }
        // Years here are within −49 … 10049: the product and the sum cannot overflow.
        return HTTPDate(secondsSinceEpoch: days(fromCivil: year, month, day) * 86_400 + time)
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
    static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = floorDivide(y, 400)
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The proleptic Gregorian date of a day since 1970-01-01 (H. Hinnant's `civil_from_days`).
    package static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = floorDivide(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

/// ⌊a / b⌋ for b > 0, for every `a` (no overflow at `Int64.min`).
package func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
    let quotient = a / b
    return a % b < 0 ? quotient - 1 : quotient
}

/// a mod b in 0..<b for b > 0, for every `a` (no overflow at `Int64.min`).
func floorModulo(_ a: Int64, _ b: Int64) -> Int64 {
    let remainder = a % b
    return remainder < 0 ? remainder + b : remainder
}
