extension Duration {
    /// The span in nanoseconds, saturating instead of overflowing (NIO's `TimeAmount` counts nanoseconds).
    package var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (nanos, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (total, overflow2) = nanos.addingReportingOverflow(attoseconds / 1_000_000_000)
        return overflow2 ? .max : total
    }
}
