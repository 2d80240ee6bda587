import Foundation

/// The statistics every benchmark reports: medians of rounds, and the spread of per-round ratios.
public enum Statistics {
    /// The median (the mean of the middle two for an even count); nil for no values.
    public static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// `numerators[i] ÷ denominators[i]` for each round where both were measured and the denominator is positive.
    public static func ratios(_ numerators: [Double], _ denominators: [Double]) -> [Double] {
        zip(numerators, denominators).compactMap { $1 > 0 ? $0 / $1 : nil }
    }

    /// `1.23× (1.10–1.40)`: the median ratio and the lowest and highest round; `—` for none.
    public static func spread(_ ratios: [Double]) -> String {
        guard let median = median(ratios), let low = ratios.min(), let high = ratios.max() else { return "—" }
        return String(format: "%.2f× (%.2f–%.2f)", median, low, high)
    }
}
