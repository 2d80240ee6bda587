extension Duration {
    /// The span in whole nanoseconds (a part below one nanosecond dropped, toward zero), saturating at `Int64.max`
    /// or `Int64.min` instead of trapping: about 292 years and beyond is "forever" to a timer. NIO's `TimeAmount`
    /// and AsyncHTTPClient's deadlines count nanoseconds in an `Int64`.
    ///
    /// ```swift
    /// Duration.milliseconds(1500).nanoseconds    // 1_500_000_000
    /// Duration.seconds(Int64.max).nanoseconds    // Int64.max, not a trap
    /// TimeAmount.nanoseconds(timeout.nanoseconds) // NIO
    /// ```
    package var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        // `components` gives both parts the sign of the whole, so an overflow here goes the way of the part added.
        let part = attoseconds / 1_000_000_000
        let (total, overflowPart) = whole.addingReportingOverflow(part)
        if overflowPart { return part < 0 ? .min : .max }
        return total
    }

    /// The span in seconds, as a `Double` (exact to the nanosecond for any span under about 100 days; a `Double`
    /// cannot overflow here).
    ///
    /// ```swift
    /// Duration.milliseconds(250).seconds          // 0.25
    /// ```
    package var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
