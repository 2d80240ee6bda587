import Foundation
import Testing

@testable import GQLNet

/// `Retry-After` values as servers send them, and as hostile ones do.
@Suite struct RetryAfterTests {
    let now = Date(timeIntervalSince1970: 1_445_412_480)  // Wed, 21 Oct 2015 07:28:00 GMT

    @Test func secondsAndDatesAreRead() {
        #expect(RetryAfter.duration("120", now: now) == .seconds(120))
        #expect(RetryAfter.duration(" 0 ", now: now) == .zero)
        #expect(RetryAfter.duration("Wed, 21 Oct 2015 07:28:30 GMT", now: now) == .seconds(30))
        #expect(RetryAfter.duration("Wed, 21 Oct 2015 07:27:00 GMT", now: now) == .zero)  // in the past
    }

    @Test func longWaitsAreCutToAnHour() {
        #expect(RetryAfter.duration("3600", now: now) == RetryAfter.longest)
        #expect(RetryAfter.duration("1000000000000", now: now) == RetryAfter.longest)
        #expect(RetryAfter.duration(String(repeating: "9", count: 400), now: now) == RetryAfter.longest)
        #expect(RetryAfter.duration("Fri, 21 Oct 2016 07:28:00 GMT", now: now) == RetryAfter.longest)
    }

    @Test(arguments: [
        "", "-5", "+5", "1.5", "soon", "5 s", "Wednesday, 21-Oct-15 07:28:30 GMT", "Wed Oct 21 07:28:30 2015",
        "Wed, 21 Oct 2015 07:28:30 UTC", "Wed, 32 Oct 2015 07:28:30 GMT", "Wed, 21 Foo 2015 07:28:30 GMT",
        "Wed, 21 Oct 2015 25:28:30 GMT", "Wed, 21 Oct 2015 07:28 GMT",
    ])
    func otherValuesAreIgnored(value: String) {
        #expect(RetryAfter.duration(value, now: now) == nil)
    }
}
