#!/usr/bin/env python3
"""An implementation of the protocol's server-feedback extension that reads only Retry-After (and
the Date it counts from), as Spec/HTTP.md HTTP-1, HTTP-2, HTTP-3 and HTTP-6 say, and no strategy.
It is honest about the rest: RateLimit and X-RateLimit fields are not read (empty lists, nulls, no
diagnostic), so the cases about them differ. --extensions NAMES declares other extensions.
--bug NAME injects one of BUGS, each a mistake the HTTP vectors do not set up: only the generated
responses of a run that explores find it."""
import json, re, sys

INT64_MAX = 2**63 - 1
BUGS = {
    "september-as-sept": "the month table writes September \"Sept\", so a date in September is malformed",
    "thursday-misspelled": "the RFC 850 day table writes \"Thurday\", so such a date on a Thursday is malformed",
}
BUG = sys.argv[sys.argv.index("--bug") + 1] if "--bug" in sys.argv else None
if BUG is not None and BUG not in BUGS:
    sys.exit(f"unknown bug {BUG}: {', '.join(BUGS)}")
DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
LONG_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
if BUG == "september-as-sept":
    MONTHS[8] = "Sept"
if BUG == "thursday-misspelled":
    LONG_DAYS[3] = "Thurday"
D2, TIME = "([0-9]{2})", "([0-9]{2}):([0-9]{2}):([0-9]{2})"
IMF = re.compile(f"({'|'.join(DAYS)}), {D2} ({'|'.join(MONTHS)}) ([0-9]{{4}}) {TIME} GMT")
RFC850 = re.compile(f"({'|'.join(LONG_DAYS)}), {D2}-({'|'.join(MONTHS)})-{D2} {TIME} GMT")
ASCTIME = re.compile(f"({'|'.join(DAYS)}) ({'|'.join(MONTHS)}) ( [0-9]|[0-9]{{2}}) {TIME} ([0-9]{{4}})")


def days_from_civil(y, m, d):  # H. Hinnant's algorithm, proleptic Gregorian
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    return era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468


def year_of(seconds):
    z = seconds // 86400 + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    return yoe + era * 400 + (1 if (5 * doy + 2) // 153 >= 10 else 0)


def make(year, month, day, hh, mm, ss):
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    length = [31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
    if not (1 <= day <= length and hh < 24 and mm < 60 and ss <= 60):
        return None
    return days_from_civil(year, month, day) * 86400 + hh * 3600 + mm * 60 + ss


def http_date(text, reference):
    if m := IMF.fullmatch(text):
        _, day, month, year, hh, mm, ss = m.groups()
        return make(int(year), MONTHS.index(month) + 1, int(day), int(hh), int(mm), int(ss))
    if m := RFC850.fullmatch(text):
        _, day, month, yy, hh, mm, ss = m.groups()
        ref = min(max(year_of(reference), 0), 9999)
        year = ref - ref % 100 + int(yy)
        year = year - 100 if year > ref + 50 else year + 100 if year < ref - 49 else year
        return make(year, MONTHS.index(month) + 1, int(day), int(hh), int(mm), int(ss))
    if m := ASCTIME.fullmatch(text):
        _, month, day, hh, mm, ss, year = m.groups()
        return make(int(year), MONTHS.index(month) + 1, int(day.strip()), int(hh), int(mm), int(ss))
    return None


def nanoseconds(seconds):
    return max(min(seconds * 10**9, INT64_MAX), 0)


def feedback(fields, received):
    diagnostics = []

    def single(name):
        values = [v.strip(" \t") for n, v in fields if n.encode().lower() == name.lower().encode()]
        if values and any(v != values[0] for v in values):
            diagnostics.append({"field": name, "problem": "repeated"})
            return None
        return values[0] if values else None

    date, reference = None, received
    if (text := single("Date")) is not None:
        date = http_date(text, received)
        if date is None:
            diagnostics.append({"field": "Date", "problem": "malformed"})
        elif abs(date - received) <= 3600:
            reference = date
        else:
            diagnostics.append({"field": "Date", "problem": "clockSkew"})
    retry_after, wait = None, None
    if (text := single("Retry-After")) is not None:
        if re.fullmatch("[0-9]+", text):
            retry_after = {"delay": min(int(text), INT64_MAX)}
            wait = nanoseconds(retry_after["delay"])
        elif (when := http_date(text, reference)) is not None:
            retry_after, wait = {"date": when}, nanoseconds(when - reference)
        else:
            diagnostics.append({"field": "Retry-After", "problem": "malformed"})
    none = {"limit": None, "remaining": None, "used": None, "reset": None, "resource": None}
    return {"retryAfter": retry_after, "requestedWaitNanoseconds": wait, "date": date, "reference": reference,
            "limits": [], "policies": [], "xRateLimit": none, "remainingQuota": None, "statedRate": None,
            "diagnostics": diagnostics}


extensions = ["server-feedback"]
if "--extensions" in sys.argv:
    extensions = [name for name in sys.argv[sys.argv.index("--extensions") + 1].split(",") if name]
# --feedback-members a,b: the hello names the members of a feedback answer it fills (protocol.md).
members = None
if "--feedback-members" in sys.argv:
    members = [name for name in sys.argv[sys.argv.index("--feedback-members") + 1].split(",") if name]
for line in sys.stdin:
    message = json.loads(line)
    kind = message.get("type")
    if kind == "hello":
        answer = {"type": "hello", "protocol": 2, "implementation": "retry-after-only 1", "strategies": [],
                  "extensions": extensions}
        if members is not None:
            answer["feedbackMembers"] = members
    elif kind == "feedback":
        result = feedback(message["fields"], message["receivedAt"])
        answer = {"type": "feedback", "id": message["id"], "result": result}
    elif kind == "bye":
        break
    else:
        answer = {"type": "error", "message": f"unexpected {kind}"}
    print(json.dumps(answer, ensure_ascii=False), flush=True)
