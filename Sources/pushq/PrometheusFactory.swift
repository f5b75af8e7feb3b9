import CoreMetrics
import Prometheus
import PushWorker

/// swift-metrics into a Prometheus registry, with the help text and buckets of
/// ``WorkerMetrics/catalog`` (swift-prometheus' own factory leaves help empty, which
/// `promtool check metrics` reports).
struct PrometheusFactory: MetricsFactory {
    let registry: PrometheusCollectorRegistry
    private let plain: PrometheusMetricsFactory

    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
        self.plain = PrometheusMetricsFactory(registry: registry)
    }

    /// The label as the full name (unit already in it), with its help text.
    private func descriptor(_ label: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: label, unitName: "", helpText: WorkerMetrics.catalog[label]?.help ?? "")
    }
    private func buckets(_ label: String) -> [Double] { WorkerMetrics.catalog[label]?.buckets ?? [] }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        registry.makeCounter(descriptor: descriptor(label), labels: dimensions)
    }

    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        registry.makeCounter(descriptor: descriptor(label), labels: dimensions)
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        guard aggregate else { return registry.makeGauge(descriptor: descriptor(label), labels: dimensions) }
        return registry.makeValueHistogram(descriptor: descriptor(label), labels: dimensions, buckets: buckets(label))
    }

    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        registry.makeGauge(descriptor: descriptor(label), labels: dimensions)
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        let bounds = buckets(label).map { Duration.nanoseconds(Int64(($0 * 1e9).rounded())) }
        return registry.makeDurationHistogram(descriptor: descriptor(label), labels: dimensions, buckets: bounds)
    }

    func destroyCounter(_ handler: any CounterHandler) { plain.destroyCounter(handler) }
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) { plain.destroyFloatingPointCounter(handler) }
    func destroyRecorder(_ handler: any RecorderHandler) { plain.destroyRecorder(handler) }
    func destroyMeter(_ handler: any MeterHandler) { plain.destroyMeter(handler) }
    func destroyTimer(_ handler: any TimerHandler) { plain.destroyTimer(handler) }
}
