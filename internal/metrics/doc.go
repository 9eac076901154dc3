// Package metrics owns deployer's metrics (docs/observability.md): the
// instrument names and attributes of the lock and deploy metrics, their
// export over OTLP with the OpenTelemetry SDK when the standard
// OTEL_EXPORTER_OTLP_* variables ask for it, and CloudWatch Embedded Metric
// Format lines written to a file (DEPLOYER_METRICS_EMF or metrics.emf).
//
// A *Recorder implements lockmgr.Observer and core.Observer; the CLI builds
// one per process and shuts it down before exit, which never waits longer
// than ShutdownTimeout for a collector.
package metrics
