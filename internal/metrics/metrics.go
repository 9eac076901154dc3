package metrics

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/deployer-dev/deployer/internal/deploy/core"
	"github.com/deployer-dev/deployer/internal/guard"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// Instrument names (the design's lock metrics plus deploy metrics;
// docs/observability.md#metrics). Units: ms for the acquisition duration,
// seconds for the held and deploy durations, counts for the rest.
const (
	LockAcquisitionDuration = "deployer.lock.acquisition.duration"
	LockAcquisitionSuccess  = "deployer.lock.acquisition.success"
	LockAcquisitionFailure  = "deployer.lock.acquisition.failure"
	LockHeldDuration        = "deployer.lock.held.duration"
	LockHeartbeatSuccess    = "deployer.lock.heartbeat.success"
	LockHeartbeatFailure    = "deployer.lock.heartbeat.failure"
	LockStaleDetected       = "deployer.lock.stale.detected"
	DeploySuccess           = "deployer.deploy.success"
	DeployFailure           = "deployer.deploy.failure"
	DeployDuration          = "deployer.deploy.duration"
	// DeployComponents counts the components of a deploy or destroy by
	// result (attribute result: created, updated, replaced, deleted,
	// failed, cancelled, pending, not_started; deploy.Summary.Counts). EMF
	// has no attribute per value: there each result is its own metric,
	// DeployComponents + "." + result.
	DeployComponents = "deployer.deploy.components"
)

// Attribute (and EMF dimension) names.
const (
	AttrStack       = "stack"
	AttrEnvironment = "environment"
	AttrLockLevel   = "lock_level"
	AttrOperation   = "operation" // deploy metrics: deploy | destroy | restore
	AttrStatus      = "status"    // deploy metrics: success | failed | cancelled
	AttrResult      = "result"    // deployer.deploy.components: deploy.Summary.Counts' names
	AttrResource    = "resource"  // guard metrics: the shared resource (shared: NAME)
	AttrApp         = "app"       // guard metrics: the application stopping it (--as)
)

// ShutdownTimeout bounds what Shutdown waits for the OTLP collector: the
// final export, its retries and the connection attempts together. A
// collector that is down or unreachable delays the command's exit by at most
// this much (docs/observability.md#otlp).
const ShutdownTimeout = 1500 * time.Millisecond

// Options configure New.
type Options struct {
	// Getenv reads OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_METRICS_ENDPOINT,
	// the matching *_PROTOCOL variables and OTEL_SDK_DISABLED. The exporters
	// read the other standard OTEL_* variables (headers, TLS, resource
	// attributes) from the process environment themselves.
	Getenv func(string) string
	// EMFPath is the file EMF lines are appended to; "" writes none.
	EMFPath string
	// Version is the service.version resource attribute.
	Version string
	// Now stamps EMF lines (default time.Now).
	Now func() time.Time
}

// Recorder records deployer's metrics to the configured exports. Its methods
// are safe for concurrent use and cheap when nothing is exported.
type Recorder struct {
	provider *sdkmetric.MeterProvider // nil without OTLP
	emf      *emfWriter               // nil without EMF
	endpoint string

	acqDur, heldDur, depDur             metric.Float64Histogram
	acqOK, acqFail, hbOK, hbFail, stale metric.Int64Counter
	depOK, depFail, depComponents       metric.Int64Counter
	guardDecisions                      map[string]metric.Int64Counter // by guard counter name
	guardRetries                        metric.Int64Counter
	guardLockDur                        metric.Float64Histogram
}

// OTLPEnabled reports whether getenv asks for OTLP metrics: an endpoint in
// OTEL_EXPORTER_OTLP_METRICS_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT, and
// OTEL_SDK_DISABLED not "true".
func OTLPEnabled(getenv func(string) string) bool {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		return false
	}
	return getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
}

// New returns a Recorder exporting over OTLP when OTLPEnabled, and as EMF to
// o.EMFPath when set. Errors: an unknown OTLP protocol (the message lists the
// supported ones), or an EMF file that cannot be opened for appending. On
// error the returned Recorder is still usable and records to the exports
// that could be set up.
func New(ctx context.Context, o Options) (*Recorder, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	r := &Recorder{}
	var errs []error
	if o.EMFPath != "" {
		w, err := openEMF(o.EMFPath, o.Now)
		if err != nil {
			errs = append(errs, err)
		} else {
			r.emf = w
		}
	}
	var mp metric.MeterProvider = noop.NewMeterProvider()
	if OTLPEnabled(o.Getenv) {
		p, endpoint, err := newProvider(ctx, o)
		if err != nil {
			errs = append(errs, err)
		} else {
			r.provider, r.endpoint, mp = p, endpoint, p
		}
	}
	if err := r.instruments(mp.Meter("github.com/deployer-dev/deployer")); err != nil {
		errs = append(errs, err)
	}
	return r, errors.Join(errs...)
}

// protocol returns the OTLP protocol the standard variables choose
// (http/protobuf by default, as the OpenTelemetry specification says).
func protocol(getenv func(string) string) string {
	if p := getenv("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"); p != "" {
		return p
	}
	if p := getenv("OTEL_EXPORTER_OTLP_PROTOCOL"); p != "" {
		return p
	}
	return "http/protobuf"
}

// exportRetry keeps retries of one export inside ShutdownTimeout. Both
// OTLP exporters take it: their RetryConfig types have the same fields.
var exportRetry = otlpmetrichttp.RetryConfig{
	Enabled: true, InitialInterval: 100 * time.Millisecond, MaxInterval: 400 * time.Millisecond, MaxElapsedTime: ShutdownTimeout,
}

func newProvider(ctx context.Context, o Options) (*sdkmetric.MeterProvider, string, error) {
	// The metrics-specific endpoint is used as is; the generic one is a base
	// URL that OTLP/HTTP appends /v1/metrics to (OTLP exporter specification).
	endpoint, httpURL := o.Getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"), ""
	if endpoint != "" {
		httpURL = endpoint
	} else {
		endpoint = o.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
		httpURL = strings.TrimSuffix(endpoint, "/") + "/v1/metrics"
	}
	var exp sdkmetric.Exporter
	var err error
	switch p := protocol(o.Getenv); p {
	case "http/protobuf":
		exp, err = otlpmetrichttp.New(ctx,
			otlpmetrichttp.WithEndpointURL(httpURL),
			otlpmetrichttp.WithTimeout(ShutdownTimeout),
			otlpmetrichttp.WithRetry(exportRetry))
	case "grpc":
		exp, err = otlpmetricgrpc.New(ctx,
			otlpmetricgrpc.WithEndpointURL(endpoint),
			otlpmetricgrpc.WithTimeout(ShutdownTimeout),
			otlpmetricgrpc.WithRetry(otlpmetricgrpc.RetryConfig(exportRetry)))
	default:
		return nil, "", fmt.Errorf("OTLP protocol %q is not supported: set OTEL_EXPORTER_OTLP_PROTOCOL to http/protobuf or grpc", p)
	}
	if err != nil {
		return nil, "", fmt.Errorf("OTLP metrics exporter for %s: %w", endpoint, err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "deployer"), attribute.String("service.version", o.Version)),
		resource.WithFromEnv()) // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win
	if err != nil {
		res = resource.Default()
	}
	// The periodic reader exports during long deploys (every 60 s, or
	// OTEL_METRIC_EXPORT_INTERVAL); Shutdown exports the rest.
	reader := sdkmetric.NewPeriodicReader(exp, sdkmetric.WithTimeout(ShutdownTimeout))
	return sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader), sdkmetric.WithResource(res)), endpoint, nil
}

func (r *Recorder) instruments(m metric.Meter) error {
	var errs []error
	hist := func(name, unit, desc string, bounds ...float64) metric.Float64Histogram {
		h, err := m.Float64Histogram(name, metric.WithUnit(unit), metric.WithDescription(desc), metric.WithExplicitBucketBoundaries(bounds...))
		errs = append(errs, err)
		return h
	}
	count := func(name, desc string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithUnit("{count}"), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	r.acqDur = hist(LockAcquisitionDuration, "ms", "Time to acquire a lock, waits included, successful or not",
		1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 300000, 600000)
	r.acqOK = count(LockAcquisitionSuccess, "Locks acquired")
	r.acqFail = count(LockAcquisitionFailure, "Lock acquisitions that failed: held past --lock-timeout, backend error or cancelled")
	r.heldDur = hist(LockHeldDuration, "s", "Time a lock was held, from acquisition to release",
		1, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14400)
	r.hbOK = count(LockHeartbeatSuccess, "Heartbeats that renewed a lease")
	r.hbFail = count(LockHeartbeatFailure, "Heartbeats that failed to renew a lease")
	r.stale = count(LockStaleDetected, "STALE locks seen by deployer state locks")
	r.depOK = count(DeploySuccess, "Deployments, destroys and restores that succeeded")
	r.depFail = count(DeployFailure, "Deployments, destroys and restores that failed or were cancelled")
	r.depComponents = count(DeployComponents, "Components of deployments and destroys, by result (created, updated, replaced, deleted, failed, cancelled, pending, not_started)")
	r.depDur = hist(DeployDuration, "s", "Duration of the apply of a deployment, destroy or restore",
		1, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200)
	r.guardDecisions = map[string]metric.Int64Counter{
		guard.CounterStopped:             count(guard.CounterStopped, "guard stop runs that stopped a shared resource with every other sharer DOWN"),
		guard.CounterDedicatedStopped:    count(guard.CounterDedicatedStopped, "guard stop runs that stopped a resource with no other sharer"),
		guard.CounterSkippedSharedActive: count(guard.CounterSkippedSharedActive, "guard stop runs skipped because a sharer was UP or UNKNOWN"),
		guard.CounterSkippedLock:         count(guard.CounterSkippedLock, "guard stop runs skipped because the resource's lock stayed held"),
	}
	r.guardRetries = count(guard.CounterLockRetries, "Lock retries of guard stop runs")
	r.guardLockDur = hist(guard.CounterLockDurationMS, "ms", "Time guard stop spent taking (or failing to take) the resource's lock",
		1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000)
	return errors.Join(errs...)
}

// lockDims returns the dimensions of a lock key: stack, environment and
// lock_level; custom keys (lock exec) have only lock_level "custom".
func lockDims(key string) []dim {
	pk, ok := lockmgr.ParseKey(key)
	if !ok {
		return nil
	}
	if pk.Level == lockmgr.LevelCustom {
		return []dim{{AttrLockLevel, string(pk.Level)}}
	}
	return []dim{{AttrStack, pk.Stack}, {AttrEnvironment, pk.Env}, {AttrLockLevel, string(pk.Level)}}
}

type dim struct{ name, value string }

func attrs(dims []dim) metric.MeasurementOption {
	kv := make([]attribute.KeyValue, len(dims))
	for i, d := range dims {
		kv[i] = attribute.String(d.name, d.value)
	}
	return metric.WithAttributes(kv...)
}

// LockAcquired records one acquisition of key that took wait and ended with
// err (nil: acquired). It implements lockmgr.Observer.
func (r *Recorder) LockAcquired(key string, wait time.Duration, err error) {
	dims := lockDims(key)
	ms := float64(wait) / float64(time.Millisecond)
	ctx, a := context.Background(), attrs(dims)
	r.acqDur.Record(ctx, ms, a)
	outcome := LockAcquisitionSuccess
	if err == nil {
		r.acqOK.Add(ctx, 1, a)
	} else {
		r.acqFail.Add(ctx, 1, a)
		outcome = LockAcquisitionFailure
	}
	r.emf.write(dims, emfValue{LockAcquisitionDuration, unitMilliseconds, ms}, emfValue{outcome, unitCount, 1})
}

// LockReleased records that key was held for held. It implements
// lockmgr.Observer.
func (r *Recorder) LockReleased(key string, held time.Duration) {
	dims := lockDims(key)
	r.heldDur.Record(context.Background(), held.Seconds(), attrs(dims))
	r.emf.write(dims, emfValue{LockHeldDuration, unitSeconds, held.Seconds()})
}

// LockHeartbeat records one heartbeat of key (err nil: the lease was
// renewed). It implements lockmgr.Observer.
func (r *Recorder) LockHeartbeat(key string, err error) {
	dims := lockDims(key)
	name, c := LockHeartbeatSuccess, r.hbOK
	if err != nil {
		name, c = LockHeartbeatFailure, r.hbFail
	}
	c.Add(context.Background(), 1, attrs(dims))
	r.emf.write(dims, emfValue{name, unitCount, 1})
}

// StaleDetected counts one STALE lock seen (docs/locking.md#verdicts-state-locks).
func (r *Recorder) StaleDetected(key string) {
	dims := lockDims(key)
	r.stale.Add(context.Background(), 1, attrs(dims))
	r.emf.write(dims, emfValue{LockStaleDetected, unitCount, 1})
}

// DeploymentFinished records one deployment, destroy or restore under its
// lock key with its operation, status (success, failed, cancelled), the
// duration of its apply and save, and its components by result from
// f.Summary (non-zero counts only), the counts every other renderer of
// the run shows. It implements core.Observer.
func (r *Recorder) DeploymentFinished(f core.Finished) {
	dims := lockDims(f.LockKey)
	operation, status, d := f.Operation, string(f.Status), f.Duration
	run := append(dims[:len(dims):len(dims)], dim{AttrOperation, operation}, dim{AttrStatus, status})
	a := attrs(run)
	ctx := context.Background()
	name, c := DeploySuccess, r.depOK
	if f.Status != statestore.DeploymentSuccess {
		name, c = DeployFailure, r.depFail
	}
	c.Add(ctx, 1, a)
	r.depDur.Record(ctx, d.Seconds(), a)
	vals := []emfValue{{name, unitCount, 1}, {DeployDuration, unitSeconds, d.Seconds()}}
	for _, n := range f.Summary.Counts() {
		if n.N == 0 {
			continue
		}
		r.depComponents.Add(ctx, int64(n.N), attrs(append(run[:len(run):len(run)], dim{AttrResult, n.Result})))
		vals = append(vals, emfValue{DeployComponents + "." + n.Result, unitCount, float64(n.N)})
	}
	// EMF keeps stack/environment/lock_level as dimensions (the alarms'
	// ones); operation and status ride along as properties.
	r.emf.writeProps(dims, map[string]string{AttrOperation: operation, AttrStatus: status}, vals...)
}

// GuardDecided counts one guard stop decision (not a dry run) under the
// attributes resource and app: the decision's counter, and for a decision
// that went through the lock its retries and the time taken for the lock
// (ms). It implements guard.Observer (docs/guard.md#audit-events-and-counters).
func (r *Recorder) GuardDecided(res *guard.Result) {
	dims := []dim{{AttrResource, res.Resource}, {AttrApp, res.As}}
	ctx, a := context.Background(), attrs(dims)
	var vals []emfValue
	if name := guard.DecisionCounter(res.Decision); name != "" {
		r.guardDecisions[name].Add(ctx, 1, a)
		vals = append(vals, emfValue{name, unitCount, 1})
	}
	if res.Lock != nil {
		ms := res.Lock.WaitSeconds * 1000
		r.guardRetries.Add(ctx, int64(res.Lock.Retries), a)
		r.guardLockDur.Record(ctx, ms, a)
		vals = append(vals, emfValue{guard.CounterLockRetries, unitCount, float64(res.Lock.Retries)},
			emfValue{guard.CounterLockDurationMS, unitMilliseconds, ms})
	}
	r.emf.write(dims, vals...)
}

// Endpoint returns the OTLP endpoint metrics go to ("" without OTLP).
func (r *Recorder) Endpoint() string { return r.endpoint }

// Shutdown exports what is left over OTLP, waiting at most ShutdownTimeout
// (or until ctx ends, if sooner), and closes the EMF file. Errors: the
// export's (e.g. context.DeadlineExceeded when the collector is down) and
// the EMF file's.
func (r *Recorder) Shutdown(ctx context.Context) error {
	var errs []error
	if r.provider != nil {
		sctx, cancel := context.WithTimeout(ctx, ShutdownTimeout)
		defer cancel()
		if err := r.provider.Shutdown(sctx); err != nil {
			errs = append(errs, fmt.Errorf("export metrics to %s: %w", r.endpoint, err))
		}
		r.provider = nil
	}
	if err := r.emf.close(); err != nil {
		errs = append(errs, err)
	}
	r.emf = nil
	return errors.Join(errs...)
}
