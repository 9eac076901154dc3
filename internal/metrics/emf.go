package metrics

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"
)

// Namespace is the CloudWatch namespace of the EMF lines (the alarms of
// docs/observability.md#alarms-terraform watch it).
const Namespace = "Deployer"

// CloudWatch units of the EMF metric definitions.
const (
	unitMilliseconds = "Milliseconds"
	unitSeconds      = "Seconds"
	unitCount        = "Count"
)

// emfWriter appends one CloudWatch Embedded Metric Format document per
// event, one JSON object per line, to a file the CloudWatch agent tails
// (docs/observability.md#cloudwatch-emf). Each line has the root members the
// specification requires: _aws.Timestamp (ms since the epoch),
// _aws.CloudWatchMetrics[0] with Namespace, Dimensions and Metrics, and one
// member per dimension and per metric. Two dimension sets are declared: the
// event's own (stack, environment, lock_level) and the empty set, so alarms
// may watch one stack or every stack.
type emfWriter struct {
	mu   sync.Mutex
	f    *os.File
	path string
	now  func() time.Time
	err  error // first write error, reported by close
}

type emfValue struct {
	name, unit string
	value      float64
}

func openEMF(path string, now func() time.Time) (*emfWriter, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open the metrics file %s (DEPLOYER_METRICS_EMF or metrics.emf): %w", path, err)
	}
	return &emfWriter{f: f, path: path, now: now}, nil
}

func (w *emfWriter) write(dims []dim, vals ...emfValue) { w.writeProps(dims, nil, vals...) }

// writeProps writes one line; props are extra root members (not dimensions).
func (w *emfWriter) writeProps(dims []dim, props map[string]string, vals ...emfValue) {
	if w == nil || len(dims) == 0 {
		return
	}
	line := emfLine(w.now(), dims, props, vals)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil || w.err != nil {
		return
	}
	// One write per line, O_APPEND: concurrent deployers never interleave
	// within a line.
	if _, err := w.f.Write(line); err != nil {
		w.err = fmt.Errorf("write metrics to %s: %w", w.path, err)
	}
}

// emfLine renders one EMF document followed by a newline.
func emfLine(ts time.Time, dims []dim, props map[string]string, vals []emfValue) []byte {
	type metricDef struct {
		Name string `json:"Name"`
		Unit string `json:"Unit"`
	}
	type directive struct {
		Namespace  string      `json:"Namespace"`
		Dimensions [][]string  `json:"Dimensions"`
		Metrics    []metricDef `json:"Metrics"`
	}
	names := make([]string, len(dims))
	for i, d := range dims {
		names[i] = d.name
	}
	dir := directive{Namespace: Namespace, Dimensions: [][]string{names, {}}}
	for _, v := range vals {
		dir.Metrics = append(dir.Metrics, metricDef{Name: v.name, Unit: v.unit})
	}
	meta, _ := json.Marshal(struct {
		Timestamp         int64       `json:"Timestamp"`
		CloudWatchMetrics []directive `json:"CloudWatchMetrics"`
	}{ts.UnixMilli(), []directive{dir}})

	// The root object keeps a fixed member order: _aws, dimensions,
	// properties, metrics.
	var b bytes.Buffer
	b.WriteString(`{"_aws":`)
	b.Write(meta)
	member := func(k string, v any) {
		kb, _ := json.Marshal(k)
		vb, _ := json.Marshal(v)
		b.WriteByte(',')
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	for _, d := range dims {
		member(d.name, d.value)
	}
	for _, k := range []string{AttrOperation, AttrStatus} {
		if v, ok := props[k]; ok {
			member(k, v)
		}
	}
	for _, v := range vals {
		member(v.name, v.value)
	}
	b.WriteString("}\n")
	return b.Bytes()
}

func (w *emfWriter) close() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return w.err
	}
	err := w.f.Close()
	w.f = nil
	if w.err != nil {
		return w.err
	}
	if err != nil {
		return fmt.Errorf("close metrics file %s: %w", w.path, err)
	}
	return nil
}
