import GQLCore
import Testing

/// `Duration.nanoseconds` and `Duration.seconds` at their edges: zero, negative spans, parts below a nanosecond, and
/// spans whose nanoseconds do not fit an `Int64` (which saturate instead of trapping).
struct DurationConversionTests {
    @Test func zeroIsZero() {
        #expect(Duration.zero.nanoseconds == 0)
        #expect(Duration.zero.seconds == 0)
    }

    @Test func ordinarySpansConvertExactly() {
        #expect(Duration.milliseconds(1500).nanoseconds == 1_500_000_000)
        #expect(Duration.nanoseconds(7).nanoseconds == 7)
        #expect(Duration.milliseconds(250).seconds == 0.25)
        #expect(Duration.seconds(60).seconds == 60)
    }

    @Test func negativeSpansStayNegative() {
        #expect(Duration.milliseconds(-1500).nanoseconds == -1_500_000_000)
        #expect(Duration.nanoseconds(-1).nanoseconds == -1)
        #expect(Duration.milliseconds(-250).seconds == -0.25)
    }

    @Test func partsBelowANanosecondAreDroppedTowardZero() {
        let half = Duration(secondsComponent: 0, attosecondsComponent: 500_000_000)
        #expect(half.nanoseconds == 0)
        #expect((half * -1).nanoseconds == 0)
        let oneAndAHalf = Duration(secondsComponent: 0, attosecondsComponent: 1_500_000_000)
        #expect(oneAndAHalf.nanoseconds == 1)
        #expect((oneAndAHalf * -1).nanoseconds == -1)
        #expect(half.seconds == 5e-10)
    }

    @Test func spansBeyondInt64NanosecondsSaturate() {
        // Int64.max nanoseconds is 9_223_372_036 s and 854_775_807 ns: one nanosecond more no longer fits.
        let largest = Duration(secondsComponent: 9_223_372_036, attosecondsComponent: 854_775_807_000_000_000)
        #expect(largest.nanoseconds == .max)
        #expect((largest + .nanoseconds(1)).nanoseconds == .max)
        let almostOneMore = Duration(secondsComponent: 9_223_372_036, attosecondsComponent: 999_999_999_000_000_000)
        #expect(almostOneMore.nanoseconds == .max)
        #expect(Duration.seconds(Int64.max).nanoseconds == .max)
        #expect((largest * -1 - .nanoseconds(1)).nanoseconds == .min)
        #expect((largest * -1 - .nanoseconds(2)).nanoseconds == .min)
        #expect(Duration.seconds(Int64.min).nanoseconds == .min)
        #expect(Duration.seconds(Int64.max).seconds == Double(Int64.max))
    }
}
