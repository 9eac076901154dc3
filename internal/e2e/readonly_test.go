//go:build unix

package e2e

// Read-only commands (plan, state show, history, state locks) with a role
// that may only read: behind a proxy that answers every write to S3 and
// DynamoDB with 403, and on PostgreSQL as a role with SELECT only. They work
// and send no write request; the commands that write still probe the S3
// server's conditional writes before they change anything
// (docs/design.md#read-only-commands, docs/aws.md#read-only-iam-policy).

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/deployer-dev/deployer/internal/testenv"
)

// request is one request a proxy saw: the service ("s3", "dynamodb"), the
// method and the S3 path or the DynamoDB operation, and whether it writes.
type request struct {
	service, what string
	write         bool
}

func (r request) String() string { return r.service + " " + r.what }

// traffic records the requests of every proxy of a test, in order.
type traffic struct {
	mu       sync.Mutex
	seen     []request
	denyPuts bool // answer every write with 403 AccessDenied
}

func (tr *traffic) reset(deny bool) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.seen, tr.denyPuts = nil, deny
}

func (tr *traffic) requests() []request {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]request(nil), tr.seen...)
}

func (tr *traffic) writes() []request {
	var out []request
	for _, r := range tr.requests() {
		if r.write {
			out = append(out, r)
		}
	}
	return out
}

// dynamoReads are the DynamoDB operations that only read.
var dynamoReads = map[string]bool{"GetItem": true, "BatchGetItem": true, "Scan": true, "Query": true,
	"DescribeTable": true, "DescribeTimeToLive": true, "ListTables": true, "ListTagsOfResource": true}

// proxy starts a reverse proxy to target that records each request in tr
// and, while tr.denyPuts is set, answers every write with 403 AccessDenied
// as AWS does for a role without the permission. The Host header passes
// through unchanged, so SigV4 signatures made for the proxy's address stay
// valid.
func (tr *traffic) proxy(t *testing.T, service, target string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := request{service: service}
		switch service {
		case "dynamodb":
			op := r.Header.Get("X-Amz-Target")
			op = op[strings.LastIndex(op, ".")+1:]
			req.what, req.write = op, !dynamoReads[op]
		default:
			req.what = r.Method + " " + r.URL.Path
			req.write = r.Method != http.MethodGet && r.Method != http.MethodHead
		}
		tr.mu.Lock()
		tr.seen = append(tr.seen, req)
		deny := tr.denyPuts && req.write
		tr.mu.Unlock()
		if !deny {
			rp.ServeHTTP(w, r)
			return
		}
		if service == "dynamodb" {
			w.Header().Set("Content-Type", "application/x-amz-json-1.0")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprintf(w, `{"__type":"com.amazonaws.dynamodb.v20120810#AccessDeniedException","message":"User is not authorized to perform: dynamodb:%s"}`, req.what)
			return
		}
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// behindProxies points p's AWS endpoints at recording proxies in front of
// the test servers and returns their traffic.
func behindProxies(t *testing.T, p *project, r *remote) *traffic {
	t.Helper()
	tr := &traffic{}
	for _, kv := range r.env {
		name, val, _ := strings.Cut(kv, "=")
		switch name {
		case "AWS_ENDPOINT_URL_S3":
			p.env = append(p.env, name+"="+tr.proxy(t, "s3", val))
		case "AWS_ENDPOINT_URL_DYNAMODB":
			p.env = append(p.env, name+"="+tr.proxy(t, "dynamodb", val))
		}
	}
	return tr
}

// readOnlyCommands are the commands that must work with read access alone,
// with their exit codes: plan --detailed-exitcode finds the change to app/api.
var readOnlyCommands = []struct {
	args []string
	code int
}{
	{[]string{"plan", "-e", "dev"}, 0},
	{[]string{"plan", "-e", "dev", "--detailed-exitcode", "--json"}, 2},
	{[]string{"plan", "-e", "dev", "--component", "app/api"}, 0},
	{[]string{"state", "show", "-e", "dev"}, 0},
	{[]string{"state", "show", "-e", "dev", "--serial", "1", "--json"}, 0},
	{[]string{"history", "-e", "dev"}, 0},
	{[]string{"history", "-e", "dev", "--json"}, 0},
	{[]string{"state", "locks"}, 0},
	{[]string{"state", "locks", "-e", "dev", "--json"}, 0},
}

// deployedWithChange deploys the quickstart with full access and changes
// app/api's config, so a plan has something to show.
func deployedWithChange(t *testing.T, p *project) {
	t.Helper()
	p.mustRun(0, "deploy", "-e", "dev", "--yes")
	p.write("deployer.yaml", strings.Replace(string(p.read("deployer.yaml")), "tag: v1", "tag: v2", 1))
}

func TestReadOnlyCommandsSendNoWriteToAWS(t *testing.T) {
	for _, c := range []struct{ lock, state string }{{"dynamodb", "s3"}, {"s3", "s3"}} {
		t.Run(c.lock+"-locks", func(t *testing.T) {
			r := newRemote(t, c.lock, c.state, "", true)
			p := r.quickstart(t)
			deployedWithChange(t, p)
			tr := behindProxies(t, p, r)

			tr.reset(true)
			for _, cmd := range readOnlyCommands {
				p.mustRun(cmd.code, cmd.args...)
			}
			reads := len(tr.requests())
			if w := tr.writes(); len(w) != 0 || reads == 0 {
				t.Fatalf("read-only commands sent %d write requests (%v) and %d in all; want none and some reads", len(w), w, reads)
			}

			// The commands that write probe first, and stop there when the
			// role may not write: nothing else is attempted.
			for _, args := range [][]string{
				{"deploy", "-e", "dev", "--yes"},
				{"restore", "-e", "dev", "--serial", "1", "--yes"},
				{"lock", "exec", "--key", "nightly", "--", "true"},
			} {
				if c.lock != "s3" && args[0] == "lock" {
					continue // DynamoDB locks have no probe
				}
				tr.reset(true)
				res := p.mustRun(1, args...)
				w := tr.writes()
				if len(w) != 1 || !strings.Contains(w[0].what, "PUT /"+r.bucket+"/.deployer-probe/") {
					t.Errorf("deployer %s with a read-only role: want one write, the probe's PUT under .deployer-probe/, got %v\n%s", strings.Join(args, " "), w, res)
				}
				if !strings.Contains(res.stderr, "probe conditional writes") || !strings.Contains(res.stderr, "denied") {
					t.Errorf("deployer %s: the error should name the probe and the denied access:\n%s", strings.Join(args, " "), res)
				}
			}

			// With write access, the probe is the first write of a deploy,
			// before the lock is taken and anything applied.
			tr.reset(false)
			p.mustRun(0, "deploy", "-e", "dev", "--yes")
			w := tr.writes()
			if len(w) < 3 || !strings.Contains(w[0].what, "/.deployer-probe/") {
				t.Errorf("deploy: the first write should be the conditional-write probe, got %v", w)
			}
			if st := p.remoteState("dev"); st.Serial != 2 {
				t.Errorf("serial after the deploy behind the proxy: %d, want 2", st.Serial)
			}
		})
	}
}

func TestReadOnlyCommandsWorkWithASelectOnlyPostgresRole(t *testing.T) {
	r := newRemote(t, "postgres", "postgres", "", true)
	p := r.quickstart(t)
	deployedWithChange(t, p)
	ro := selectOnlyRole(t, r.state)
	p.env = append(p.env, "DEPLOYER_BACKEND_STATE="+ro, "DEPLOYER_BACKEND_LOCK="+ro)
	for _, cmd := range readOnlyCommands {
		p.mustRun(cmd.code, cmd.args...)
	}
	res := p.mustRun(1, "deploy", "-e", "dev", "--yes")
	if !strings.Contains(res.stderr, "permission denied") {
		t.Errorf("deploy with a SELECT-only role should fail on permission: %s", res)
	}
	if st := p.remoteState("dev"); st.Serial != 1 {
		t.Errorf("serial %d after a deploy that may not write, want 1", st.Serial)
	}
}

// selectOnlyRole creates a login role that may only SELECT in the schema of
// the test URL raw and returns raw
// with that user. The role is dropped when t ends.
func selectOnlyRole(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	schema := u.Query().Get("search_path")
	role := "ro_" + strings.TrimPrefix(schema, "deployer_test_")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, testenv.Require(t, testenv.PostgresURL, "PostgreSQL"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, sql := range []string{
		"CREATE ROLE " + role + " LOGIN PASSWORD 'readonly'",
		"GRANT USAGE ON SCHEMA " + schema + " TO " + role,
		"GRANT SELECT ON ALL TABLES IN SCHEMA " + schema + " TO " + role,
		"GRANT SELECT ON ALL SEQUENCES IN SCHEMA " + schema + " TO " + role,
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, testenv.Require(t, testenv.PostgresURL, "PostgreSQL"))
		if err != nil {
			t.Errorf("drop role %s: %v", role, err)
			return
		}
		defer conn.Close(ctx)
		for _, sql := range []string{"DROP OWNED BY " + role, "DROP ROLE " + role} {
			if _, err := conn.Exec(ctx, sql); err != nil {
				t.Errorf("%s: %v", sql, err)
			}
		}
	})
	u.User = url.UserPassword(role, "readonly")
	return u.String()
}
