// Command pulumi-resource-deployertest is the project's own Pulumi resource
// provider for tests and for examples/pulumi-local: it changes nothing
// outside Pulumi's state, needs no network, and gives the engine what real
// clouds do (docs/pulumi.md, "The test provider"). Pulumi runs it when it is
// on PATH as pulumi-resource-deployertest; scripts/test-servers/pulumi.sh
// builds it.
//
// Resource types (package deployertest, module index):
//
//	RandomName  inputs prefix, length (words, default 2), separator ("-"),
//	            keepers (map; a change replaces the resource, with a new id);
//	            output name. Other input changes update in place.
//	Slow        inputs seconds (create time), startedFile (written when the
//	            create starts, so a test can interrupt it mid-create); a
//	            cancelled update (Ctrl-C) stops the create with an error,
//	            unless ignoreCancel is true.
//	Failing     inputs fail (bool), message: create and update fail while
//	            fail is true.
//	Secret      inputs username, length; outputs username and password, a
//	            secret output.
//
// Two environment variables, read by the provider process (Pulumi passes
// its environment on), let a test interrupt a large update mid-way without
// changing any resource's inputs:
//
//	DEPLOYERTEST_DELAY    a Go duration ("150ms") every create, update and
//	                      delete takes; the operation finishes even when the
//	                      update is cancelled, as a cloud call in flight does.
//	DEPLOYERTEST_JOURNAL  a file the provider appends one line to when an
//	                      operation starts and when it ends:
//	                      "PID start|done|failed create|update|delete URN".
//	DEPLOYERTEST_READ_NAME a name a refresh reads for every RandomName: a
//	                      change made outside Pulumi (drift).
//	DEPLOYERTEST_ENVFILE  a file the provider writes, when it starts, the
//	                      names (never the values) of its environment
//	                      variables to, one a line: what a plugin such as
//	                      command:local:Command could read.
//	DEPLOYERTEST_CLOUD    a directory of resources that exist outside
//	                      Pulumi's state, for Pulumi's import option: the
//	                      file {id}.json holds the properties of the
//	                      resource with that id, as one JSON object
//	                      ({"length": 1, "name": "amber"}). Its inputs are
//	                      those properties but the outputs a create computes
//	                      (RandomName's name, Secret's password). No file:
//	                      no such resource.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/blang/semver"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
)

// Name is the provider's package name; Version what GetPluginInfo reports.
const (
	Name    = "deployertest"
	Version = "0.1.0"
)

// main serves the provider over gRPC as Pulumi expects of a plugin: it
// prints the port it listens on and serves until Pulumi sends SIGINT.
func main() {
	if f := os.Getenv("DEPLOYERTEST_ENVFILE"); f != "" {
		var names []string
		for _, kv := range os.Environ() {
			name, _, _ := strings.Cut(kv, "=")
			names = append(names, name)
		}
		sort.Strings(names)
		if err := os.WriteFile(f, []byte(strings.Join(names, "\n")+"\n"), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cancel := make(chan bool)
	go func() {
		<-ctx.Done()
		close(cancel)
	}()
	handle, err := rpcutil.ServeWithOptions(rpcutil.ServeOptions{
		Cancel: cancel,
		Init: func(srv *grpc.Server) error {
			pulumirpc.RegisterResourceProviderServer(srv, plugin.NewProviderServer(newProvider()))
			return nil
		},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "pulumi-resource-%s: %v\n", Name, err)
		os.Exit(1)
	}
	fmt.Printf("%d\n", handle.Port)
	if err := <-handle.Done; err != nil {
		fmt.Fprintf(os.Stderr, "pulumi-resource-%s: %v\n", Name, err)
		os.Exit(1)
	}
}

type testProvider struct {
	plugin.UnimplementedProvider
	// cancelled is closed by SignalCancellation: Pulumi asks its providers
	// to stop what they are doing when its update is cancelled (Ctrl-C).
	cancelled chan struct{}
	once      sync.Once
	delay     time.Duration // DEPLOYERTEST_DELAY
	journal   string        // DEPLOYERTEST_JOURNAL
}

func newProvider() *testProvider {
	p := &testProvider{cancelled: make(chan struct{}), journal: os.Getenv("DEPLOYERTEST_JOURNAL")}
	if d, err := time.ParseDuration(os.Getenv("DEPLOYERTEST_DELAY")); err == nil && d > 0 {
		p.delay = d
	}
	return p
}

// operation runs one create, update or delete: it writes the journal's start
// line, waits the configured delay, runs do and writes the done or failed
// line.
func (p *testProvider) operation(op string, urn resource.URN, do func() error) error {
	p.record("start", op, urn)
	if p.delay > 0 {
		time.Sleep(p.delay)
	}
	err := do()
	if err != nil {
		p.record("failed", op, urn)
	} else {
		p.record("done", op, urn)
	}
	return err
}

// record appends one line to the journal, in one write (O_APPEND keeps the
// lines of concurrent operations whole).
func (p *testProvider) record(phase, op string, urn resource.URN) {
	if p.journal == "" {
		return
	}
	f, err := os.OpenFile(p.journal, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	_, _ = fmt.Fprintf(f, "%d %s %s %s\n", os.Getpid(), phase, op, urn)
	_ = f.Close()
}

func (p *testProvider) Close() error { return nil }

func (p *testProvider) SignalCancellation(context.Context) error {
	p.once.Do(func() { close(p.cancelled) })
	return nil
}

func (p *testProvider) GetPluginInfo(context.Context) (plugin.PluginInfo, error) {
	v := semver.MustParse(Version)
	return plugin.PluginInfo{Version: &v}, nil
}

func (p *testProvider) Handshake(context.Context, plugin.ProviderHandshakeRequest) (*plugin.ProviderHandshakeResponse, error) {
	return &plugin.ProviderHandshakeResponse{AcceptSecrets: true, AcceptResources: true}, nil
}

func (p *testProvider) GetSchema(context.Context, plugin.GetSchemaRequest) (plugin.GetSchemaResponse, error) {
	return plugin.GetSchemaResponse{Schema: []byte(`{"name":"` + Name + `","version":"` + Version + `"}`)}, nil
}

func (p *testProvider) CheckConfig(_ context.Context, req plugin.CheckConfigRequest) (plugin.CheckConfigResponse, error) {
	return plugin.CheckConfigResponse{Properties: req.News}, nil
}

func (p *testProvider) DiffConfig(context.Context, plugin.DiffConfigRequest) (plugin.DiffConfigResponse, error) {
	return plugin.DiffResult{Changes: plugin.DiffNone}, nil
}

func (p *testProvider) Configure(context.Context, plugin.ConfigureRequest) (plugin.ConfigureResponse, error) {
	return plugin.ConfigureResponse{}, nil
}

// kind returns the resource type's name ("RandomName") of a type token.
func kind(t string) string { return t[strings.LastIndex(t, ":")+1:] }

func (p *testProvider) Check(_ context.Context, req plugin.CheckRequest) (plugin.CheckResponse, error) {
	switch kind(string(req.Type)) {
	case "RandomName", "Slow", "Failing", "Secret":
		return plugin.CheckResponse{Properties: req.News}, nil
	}
	return plugin.CheckResponse{}, fmt.Errorf("unknown resource type %s (deployertest has RandomName, Slow, Failing, Secret)", req.Type)
}

func (p *testProvider) Diff(_ context.Context, req plugin.DiffRequest) (plugin.DiffResponse, error) {
	var changed, replace []resource.PropertyKey
	for _, k := range unionKeys(req.OldInputs, req.NewInputs) {
		if req.OldInputs[k].DeepEquals(req.NewInputs[k]) {
			continue
		}
		changed = append(changed, k)
		if k == "keepers" {
			replace = append(replace, k)
		}
	}
	if len(changed) == 0 {
		return plugin.DiffResult{Changes: plugin.DiffNone}, nil
	}
	return plugin.DiffResult{Changes: plugin.DiffSome, ChangedKeys: changed, ReplaceKeys: replace}, nil
}

func (p *testProvider) Create(ctx context.Context, req plugin.CreateRequest) (plugin.CreateResponse, error) {
	id := "dt-" + randomHex(8)
	if req.Preview {
		return plugin.CreateResponse{Properties: req.Properties}, nil
	}
	var out resource.PropertyMap
	err := p.operation("create", req.URN, func() (err error) {
		out, err = p.apply(ctx, string(req.Type), req.Properties, nil)
		return err
	})
	if err != nil {
		return plugin.CreateResponse{}, err
	}
	return plugin.CreateResponse{ID: resource.ID(id), Properties: out}, nil
}

func (p *testProvider) Update(ctx context.Context, req plugin.UpdateRequest) (plugin.UpdateResponse, error) {
	if req.Preview {
		return plugin.UpdateResponse{Properties: req.NewInputs}, nil
	}
	var out resource.PropertyMap
	err := p.operation("update", req.URN, func() (err error) {
		out, err = p.apply(ctx, string(req.Type), req.NewInputs, req.OldOutputs)
		return err
	})
	if err != nil {
		return plugin.UpdateResponse{}, err
	}
	return plugin.UpdateResponse{Properties: out}, nil
}

// Read returns the resource as recorded: a refresh finds no drift, unless
// DEPLOYERTEST_READ_NAME says what a RandomName's name is now. A read of
// an id alone (an import) reads it from DEPLOYERTEST_CLOUD (readOutside).
func (p *testProvider) Read(_ context.Context, req plugin.ReadRequest) (plugin.ReadResponse, error) {
	if len(req.State) == 0 {
		return readOutside(req)
	}
	if name := os.Getenv("DEPLOYERTEST_READ_NAME"); name != "" && kind(string(req.Type)) == "RandomName" {
		state := req.State.Copy()
		state["name"] = resource.NewStringProperty(name)
		return plugin.ReadResponse{ReadResult: plugin.ReadResult{ID: req.ID, Inputs: req.Inputs, Outputs: state}}, nil
	}
	return plugin.ReadResponse{ReadResult: plugin.ReadResult{ID: req.ID, Inputs: req.Inputs, Outputs: req.State}}, nil
}

// computed are the output properties a create computes, by resource type:
// not inputs of a resource read from outside.
var computed = map[string][]resource.PropertyKey{"RandomName": {"name"}, "Secret": {"password"}}

// readOutside reads the resource of req.ID that exists outside Pulumi's
// state, DEPLOYERTEST_CLOUD/{id}.json; an empty result (Pulumi: "resource
// does not exist") without that file.
func readOutside(req plugin.ReadRequest) (plugin.ReadResponse, error) {
	dir := os.Getenv("DEPLOYERTEST_CLOUD")
	if dir == "" || req.ID == "" || strings.ContainsAny(string(req.ID), `/\`) {
		return plugin.ReadResponse{}, nil
	}
	b, err := os.ReadFile(filepath.Join(dir, string(req.ID)+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return plugin.ReadResponse{}, nil
	}
	var props map[string]any
	if err == nil {
		err = json.Unmarshal(b, &props)
	}
	if err != nil {
		return plugin.ReadResponse{}, fmt.Errorf("read resource %s from DEPLOYERTEST_CLOUD: %w", req.ID, err)
	}
	out := resource.NewPropertyMapFromMap(props)
	in := out.Copy()
	for _, k := range computed[kind(string(req.Type))] {
		delete(in, k)
	}
	return plugin.ReadResponse{ReadResult: plugin.ReadResult{ID: req.ID, Inputs: in, Outputs: out}}, nil
}

func (p *testProvider) Delete(_ context.Context, req plugin.DeleteRequest) (plugin.DeleteResponse, error) {
	return plugin.DeleteResponse{}, p.operation("delete", req.URN, func() error { return nil })
}

// apply computes the outputs of a create or an update from the inputs.
func (p *testProvider) apply(ctx context.Context, typ string, in, old resource.PropertyMap) (resource.PropertyMap, error) {
	out := in.Copy()
	switch kind(typ) {
	case "RandomName":
		n := int(number(in, "length", 2))
		if n < 1 {
			return nil, fmt.Errorf("length must be at least 1, not %d", n)
		}
		sep := str(in, "separator", "-")
		var parts []string
		if pre := str(in, "prefix", ""); pre != "" {
			parts = append(parts, pre)
		}
		for range n {
			parts = append(parts, words[randomInt(len(words))])
		}
		out["name"] = resource.NewStringProperty(strings.Join(parts, sep))
	case "Slow":
		if f := str(in, "startedFile", ""); f != "" {
			if err := os.WriteFile(f, []byte(fmt.Sprint(os.Getpid())), 0o644); err != nil {
				return nil, fmt.Errorf("write startedFile: %w", err)
			}
		}
		cancelled := p.cancelled
		if v := unsecret(in["ignoreCancel"]); v.IsBool() && v.BoolValue() {
			cancelled = nil // a provider that does not stop: only a kill ends it
		}
		select {
		case <-time.After(time.Duration(number(in, "seconds", 1) * float64(time.Second))):
		case <-ctx.Done():
			return nil, fmt.Errorf("create cancelled: %w", ctx.Err())
		case <-cancelled:
			return nil, errors.New("create cancelled: the update was cancelled")
		}
	case "Failing":
		if v, ok := in["fail"]; ok && v.IsBool() && v.BoolValue() {
			return nil, fmt.Errorf("%s", str(in, "message", "failed on demand (fail: true)"))
		}
	case "Secret":
		if pw, ok := old["password"]; ok && old["length"].DeepEquals(in["length"]) {
			out["password"] = pw
		} else {
			out["password"] = resource.MakeSecret(resource.NewStringProperty(randomHex(int(number(in, "length", 8)))))
		}
	default:
		return nil, fmt.Errorf("unknown resource type %s", typ)
	}
	return out, nil
}

var words = []string{"amber", "brisk", "cedar", "delta", "ember", "fjord", "gale", "heron", "iris", "juniper",
	"kestrel", "lumen", "maple", "nimbus", "otter", "pine", "quartz", "raven", "sable", "tundra"}

func str(m resource.PropertyMap, k, def string) string {
	v := unsecret(m[resource.PropertyKey(k)])
	if v.IsString() {
		return v.StringValue()
	}
	return def
}

func number(m resource.PropertyMap, k string, def float64) float64 {
	v := unsecret(m[resource.PropertyKey(k)])
	if v.IsNumber() {
		return v.NumberValue()
	}
	return def
}

func unsecret(v resource.PropertyValue) resource.PropertyValue {
	if v.IsSecret() {
		return v.SecretValue().Element
	}
	return v
}

func unionKeys(a, b resource.PropertyMap) []resource.PropertyKey {
	set := map[resource.PropertyKey]bool{}
	for k := range a {
		set[k] = true
	}
	for k := range b {
		set[k] = true
	}
	out := make([]resource.PropertyKey, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func randomHex(n int) string {
	b := make([]byte, (n+1)/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)[:n]
}

func randomInt(n int) int {
	v, _ := rand.Int(rand.Reader, big.NewInt(int64(n)))
	return int(v.Int64())
}
