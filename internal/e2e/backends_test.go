//go:build unix

package e2e

// The deployer binary against the AWS backends (DynamoDB on dynalite, S3 on
// MinIO) and the self-hosted ones (Redis, PostgreSQL): the
// quickstart-style deploy, with state, history and locks read back where
// docs/design.md#state-layout puts them, through the AWS SDK directly.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/deployer-dev/deployer/internal/awsbackend"
	"github.com/deployer-dev/deployer/internal/awsbackend/awstest"
	"github.com/deployer-dev/deployer/internal/pgschema/pgschematest"
	"github.com/deployer-dev/deployer/internal/testenv"
)

// remote is one lock backend and one state backend for a test, each in
// storage of its own (a fresh bucket, table, schema, key prefix or directory).
type remote struct {
	lock, state string   // backend URLs for deployer.yaml
	env         []string // variables deployer and worker processes need (AWS endpoints, credentials)
	s3          *s3.Client
	bucket      string
	ddb         *dynamodb.Client
	table       string
}

// newRemote returns backends of the given kinds. lockKind is one of file,
// none, dynamodb, s3, redis, postgres; stateKind one of file, s3, postgres.
// file URLs are dir/.deployer (relative to deployer.yaml when dir is ""). With create the table, bucket
// or schema is made now; without it `deployer backend init` must make it.
// A server that is not running skips the test (fails it in CI).
func newRemote(t testing.TB, lockKind, stateKind, dir string, create bool) *remote {
	t.Helper()
	r := &remote{}
	uses := func(k string) bool { return lockKind == k || stateKind == k }
	if uses("s3") || uses("dynamodb") {
		region := awstest.Region()
		r.env = append(r.env, "AWS_REGION="+region, "AWS_EC2_METADATA_DISABLED=true")
		var o awsbackend.Options
		if uses("s3") {
			o = awstest.S3Options(t)
			r.env = append(r.env, "AWS_ENDPOINT_URL_S3="+o.S3Endpoint)
		}
		if uses("dynamodb") {
			d := awstest.DynamoDBOptions(t)
			o.DynamoDBEndpoint, o.AccessKeyID, o.SecretAccessKey, o.Region = d.DynamoDBEndpoint, d.AccessKeyID, d.SecretAccessKey, d.Region
			r.env = append(r.env, "AWS_ENDPOINT_URL_DYNAMODB="+o.DynamoDBEndpoint)
		}
		r.env = append(r.env, "AWS_ACCESS_KEY_ID="+o.AccessKeyID, "AWS_SECRET_ACCESS_KEY="+o.SecretAccessKey)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cfg, err := awsbackend.LoadConfig(ctx, region, o)
		if err != nil {
			t.Fatal(err)
		}
		if uses("s3") {
			if create {
				r.s3, r.bucket, _ = awstest.NewBucket(t)
			} else {
				r.s3, r.bucket = awsbackend.NewS3Client(cfg, true, o), awstest.Name()
			}
		}
		if uses("dynamodb") {
			if create {
				r.ddb, r.table, _ = awstest.NewTable(t)
			} else {
				r.ddb, r.table = awsbackend.NewDynamoDBClient(cfg, o), awstest.Name()
				t.Cleanup(func() {
					_, _ = r.ddb.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(r.table)})
				})
			}
		}
	}
	var pg string
	if uses("postgres") {
		if create {
			pg = pgschematest.Migrated(t)
		} else {
			pg = pgschematest.Empty(t)
		}
	}
	url := func(kind string) string {
		switch kind {
		case "file":
			return "file://" + filepath.Join(dir, ".deployer")
		case "none":
			return "none"
		case "s3":
			return "s3://" + r.bucket
		case "dynamodb":
			return "dynamodb://" + r.table + "?region=" + awstest.Region()
		case "postgres":
			return pg
		case "redis":
			return withQuery(testenv.Require(t, testenv.RedisURL, "redis-server"), "key_prefix", "e2e-"+awstest.Name())
		}
		t.Fatalf("unknown backend kind %q", kind)
		return ""
	}
	r.lock, r.state = url(lockKind), url(stateKind)
	return r
}

// withQuery adds key=value to the query of raw.
func withQuery(raw, key, value string) string {
	u, err := url.Parse(raw)
	if err != nil {
		panic(err)
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// backendYAML is the backend block of deployer.yaml for r with the lease timings.
func (r *remote) backendYAML(ttl, heartbeat, stale string) string {
	return fmt.Sprintf("backend:\n  state: '%s'\n  lock: '%s'\n  path_style: true\n  lock_ttl: %s\n  heartbeat_interval: %s\n  stale_after: %s\n",
		r.state, r.lock, ttl, heartbeat, stale)
}

// gateStep is a Command component's script: "NAME start/end NANOS TAG" lines
// in events.log (the format of deploy_test.go's stepScript, so p.events and
// p.intervals read them); while the file named by $2 (default "hold")
// exists it waits, at most 60 s. Outside deployer (lock exec) it writes no outputs.
const gateStep = `#!/bin/sh
name=$1
gate=${2:-hold}
echo "$name start $(date +%s%N) ${RUN_TAG:-main}" >> events.log
n=0
while [ -f "$gate" ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n+1)); done
echo "$name end $(date +%s%N) ${RUN_TAG:-main}" >> events.log
if [ -n "$DEPLOYER_OUTPUTS" ]; then printf '{"name":"%s"}' "$name" > "$DEPLOYER_OUTPUTS"; fi
`

// quickstartBody is a small quickstart of three Command components.
const quickstartBody = `environments:
  dev: {}
services:
  base:
    components:
      net:
        kind: Command
        config: {cidr: 10.0.0.0/16}
        command: {create: ./step.sh net, update: ./step.sh net, delete: ./step.sh net-delete}
  app:
    components:
      db:
        kind: Command
        depends_on: [base/net]
        config: {size: small}
        command: {create: ./step.sh db, update: ./step.sh db, delete: ./step.sh db-delete}
      api:
        kind: Command
        depends_on: [db]
        config: {replicas: 2, image: {tag: v1}}
        command: {create: ./step.sh api, update: ./step.sh api, delete: ./step.sh api-delete}
`

func (r *remote) quickstart(t *testing.T) *project {
	t.Helper()
	p := newProject(t, "stack: shop\n"+r.backendYAML("5s", "200ms", "10s")+quickstartBody)
	p.env = append(p.env, r.env...)
	p.write("step.sh", gateStep)
	return p
}

// remoteState reads the verified state through `deployer state show --json`.
func (p *project) remoteState(env string, extra ...string) stateDoc {
	p.t.Helper()
	r := p.mustRun(0, append([]string{"state", "show", "-e", env, "--json"}, extra...)...)
	var st stateDoc
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		p.t.Fatalf("state show --json: %v\n%s", err, r)
	}
	return st
}

// backendInitTwice runs `deployer backend init` twice: the first run creates
// (wantCreated in its output), the second finds everything in place.
func backendInitTwice(t *testing.T, p *project, wantCreated, wantExisting []string) {
	t.Helper()
	first := p.mustRun(0, "backend", "init")
	for _, w := range wantCreated {
		if !strings.Contains(first.stdout, w) {
			t.Errorf("first backend init should report %q:\n%s", w, first)
		}
	}
	second := p.mustRun(0, "backend", "init")
	for _, w := range wantExisting {
		if !strings.Contains(second.stdout, w) {
			t.Errorf("second backend init should report %q:\n%s", w, second)
		}
	}
	if strings.Contains(second.stdout, ": created") || strings.Contains(second.stdout, "applied migration") {
		t.Errorf("second backend init created something again (not idempotent):\n%s", second)
	}
}

// deployQuickstart runs the quickstart's first deploy, checks it through
// deployer, and checks a second deploy has nothing to do.
func deployQuickstart(t *testing.T, p *project) stateDoc {
	t.Helper()
	r := p.mustRun(0, "deploy", "-e", "dev", "--yes")
	if !strings.Contains(r.stdout, "Plan: 3 to create") {
		t.Errorf("first deploy should plan 3 creates:\n%s", r)
	}
	if got := strings.Join(p.events("start"), ","); got != "net,db,api" {
		t.Errorf("components ran in order %s, want net,db,api", got)
	}
	st := p.remoteState("dev")
	if st.Serial != 1 || len(st.Resources) != 3 || len(st.DeploymentHistory) != 1 || st.DeploymentHistory[0].Status != "success" {
		t.Fatalf("state after the first deploy: serial %d, %d resources, history %+v", st.Serial, len(st.Resources), st.DeploymentHistory)
	}
	if locks := p.locks(); len(locks) != 0 {
		t.Errorf("locks left after deploy: %+v", locks)
	}
	r = p.mustRun(0, "deploy", "-e", "dev", "--yes")
	if !strings.Contains(r.stdout, "No changes") {
		t.Errorf("second deploy should report no changes:\n%s", r)
	}
	if again := p.remoteState("dev"); again.Serial != 1 {
		t.Errorf("a deploy without changes wrote serial %d", again.Serial)
	}
	var hist []struct {
		Serial int64 `json:"serial"`
	}
	r = p.mustRun(0, "history", "-e", "dev", "--json")
	if err := json.Unmarshal([]byte(r.stdout), &hist); err != nil || len(hist) != 1 || hist[0].Serial != 1 {
		t.Errorf("history should list serial 1 only: %v\n%s", err, r)
	}
	return st
}

// holdDeploy starts a deploy that updates app/api, whose script waits while
// the file "hold" exists, and returns once app/api started (the deploy holds
// its lock). finish removes "hold" and waits for the deploy's end.
func holdDeploy(t *testing.T, p *project) (finish func() result) {
	t.Helper()
	p.write("deployer.yaml", strings.Replace(string(p.read("deployer.yaml")), "tag: v1", "tag: v2", 1))
	p.write("hold", "")
	d := p.start("deploy", "-e", "dev", "--yes")
	eventually(t, 30*time.Second, "the deploy to start app/api", func() bool {
		return strings.Contains(strings.Join(p.events("start"), ","), "net,db,api,api")
	})
	return func() result {
		if err := os.Remove(filepath.Join(p.dir, "hold")); err != nil {
			t.Fatal(err)
		}
		return d.wait(t, 60*time.Second)
	}
}

// heldLock returns the one lock `state locks --json` lists, the stack lock of
// shop/dev held by a deploy.
func heldLock(t *testing.T, p *project) lockRow {
	t.Helper()
	locks := p.locks()
	if len(locks) != 1 || locks[0].LockKey != "stack:shop:env:dev" || locks[0].Metadata.Operation != "deploy" || locks[0].Status != "ACTIVE" {
		t.Fatalf("state locks should list the deploy's ACTIVE lock stack:shop:env:dev: %+v", locks)
	}
	return locks[0]
}

var snapshotName = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\.\d{3}Z-(\d+)\.json$`)

// s3Layout checks state.json and the history snapshots of shop/dev in the
// bucket (docs/design.md#state-layout) with a plain S3 client: state.json holds serial, and
// history/ holds one snapshot per serial 1..serial named by the pattern of docs/state-format.md#history-snapshots.
func (r *remote) s3Layout(t *testing.T, serial int64, lineage string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := r.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(r.bucket), Key: aws.String("stacks/shop/dev/state.json")})
	if err != nil {
		t.Fatalf("s3://%s/stacks/shop/dev/state.json: %v", r.bucket, err)
	}
	data, _ := io.ReadAll(out.Body)
	out.Body.Close()
	var st stateDoc
	if err := json.Unmarshal(data, &st); err != nil || st.Serial != serial || st.Lineage != lineage || !strings.HasPrefix(st.Checksums["resources"], "sha256:") {
		t.Errorf("s3 state.json: serial %d lineage %s checksums %v (err %v), want serial %d lineage %s", st.Serial, st.Lineage, st.Checksums, err, serial, lineage)
	}
	seen := r.s3Snapshots(t)
	for s := int64(1); s <= serial; s++ {
		if seen[fmt.Sprint(s)] != 1 {
			t.Errorf("want one history snapshot of serial %d named YYYY-MM-DDTHH-MM-SS.mmmZ-%d.json under s3://%s/stacks/shop/dev/history/, found %d", s, s, r.bucket, seen[fmt.Sprint(s)])
		}
	}
}

// s3Snapshots counts the objects under stacks/shop/dev/history/ per serial,
// for names of the history snapshot pattern; other names count under "".
func (r *remote) s3Snapshots(t *testing.T) map[string]int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := r.s3.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(r.bucket), Prefix: aws.String("stacks/shop/dev/history/")})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, o := range list.Contents {
		name := strings.TrimPrefix(aws.ToString(o.Key), "stacks/shop/dev/history/")
		m := snapshotName.FindStringSubmatch(name)
		if m == nil {
			t.Errorf("unexpected object s3://%s/%s in history/", r.bucket, aws.ToString(o.Key))
			seen[""]++
			continue
		}
		seen[m[1]]++
	}
	return seen
}

// s3LockObject finds, with a plain S3 client, the record under locks/ whose
// lockKey is key; ok is false when there is none or it is a released tombstone.
func (r *remote) s3LockObject(t *testing.T, key string) (rec map[string]any, name string, ok bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := r.s3.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(r.bucket), Prefix: aws.String("locks/")})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range list.Contents {
		out, err := r.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(r.bucket), Key: o.Key})
		if err != nil {
			continue
		}
		data, _ := io.ReadAll(out.Body)
		out.Body.Close()
		var m map[string]any
		if json.Unmarshal(data, &m) == nil && m["lockKey"] == key && m["released"] != true {
			return m, aws.ToString(o.Key), true
		}
	}
	return nil, "", false
}

// ddbItem reads the item of key, strongly consistent; nil when absent.
func (r *remote) ddbItem(t *testing.T, key string) map[string]ddbtypes.AttributeValue {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := r.ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(r.table), ConsistentRead: aws.Bool(true),
		Key: map[string]ddbtypes.AttributeValue{"lockKey": &ddbtypes.AttributeValueMemberS{Value: key}}})
	if err != nil {
		t.Fatalf("GetItem %s from table %s: %v", key, r.table, err)
	}
	return out.Item
}

// checkSeedItem checks the lock item shape of docs/design.md#lock-record: string lockKey/lockId/lockedBy,
// numeric epoch seconds, a metadata map, a fence.
func checkSeedItem(t *testing.T, item map[string]ddbtypes.AttributeValue, lockID string) {
	t.Helper()
	str := func(k string) string {
		if v, ok := item[k].(*ddbtypes.AttributeValueMemberS); ok {
			return v.Value
		}
		t.Errorf("item attribute %s is %T, want a string", k, item[k])
		return ""
	}
	if str("lockKey") != "stack:shop:env:dev" || str("lockId") != lockID || !strings.Contains(str("lockedBy"), "@") {
		t.Errorf("item %v: want lockKey stack:shop:env:dev, lockId %s, lockedBy user@host", item, lockID)
	}
	now := time.Now().Unix()
	for _, k := range []string{"lockedAt", "expiresAt", "lastHeartbeat", "fence"} {
		v, ok := item[k].(*ddbtypes.AttributeValueMemberN)
		if !ok {
			t.Errorf("item attribute %s is %T, want a number", k, item[k])
			continue
		}
		var n int64
		fmt.Sscan(v.Value, &n)
		if k == "expiresAt" && n < now {
			t.Errorf("expiresAt %d is in the past (now %d) while the deploy holds the lock", n, now)
		}
	}
	md, ok := item["metadata"].(*ddbtypes.AttributeValueMemberM)
	if !ok {
		t.Fatalf("item attribute metadata is %T, want a map", item["metadata"])
	}
	if op, _ := md.Value["operation"].(*ddbtypes.AttributeValueMemberS); op == nil || op.Value != "deploy" {
		t.Errorf("metadata.operation = %v, want deploy", md.Value["operation"])
	}
}

func TestQuickstartOnS3StateAndDynamoDBLocks(t *testing.T) {
	r := newRemote(t, "dynamodb", "s3", "", false)
	p := r.quickstart(t)
	backendInitTwice(t, p,
		[]string{fmt.Sprintf("dynamodb table %q: table: created", r.table), fmt.Sprintf("s3 bucket %q: bucket: created", r.bucket), "versioning: created"},
		[]string{fmt.Sprintf("dynamodb table %q: table: already existed", r.table), fmt.Sprintf("s3 bucket %q: bucket: already existed", r.bucket), "versioning: already existed"})
	st := deployQuickstart(t, p)
	r.s3Layout(t, 1, st.Lineage)

	finish := holdDeploy(t, p)
	lock := heldLock(t, p)
	item := r.ddbItem(t, "stack:shop:env:dev")
	if item == nil {
		t.Fatalf("no item stack:shop:env:dev in table %s while a deploy holds the lock", r.table)
	}
	checkSeedItem(t, item, lock.LockID)
	if res := finish(); res.code != 0 {
		t.Fatalf("held deploy: %s", res)
	}
	// Released: the item keeps only the key, its fence and the releaseId (docs/aws.md).
	if item := r.ddbItem(t, "stack:shop:env:dev"); len(item) != 3 || item["lockKey"] == nil || item["fence"] == nil || item["releaseId"] == nil {
		t.Errorf("after the deploy released the lock, item stack:shop:env:dev in table %s = %v, want only lockKey, fence and releaseId", r.table, item)
	}
	r.s3Layout(t, 2, st.Lineage)
	if st := p.remoteState("dev"); st.Resources["app/api"].DesiredConfig["image"].(map[string]any)["tag"] != "v2" {
		t.Errorf("serial 2 should hold image tag v2: %v", st.Resources["app/api"].DesiredConfig)
	}
}

func TestQuickstartOnS3StateAndS3Locks(t *testing.T) {
	r := newRemote(t, "s3", "s3", "", false)
	p := r.quickstart(t)
	backendInitTwice(t, p,
		[]string{fmt.Sprintf("s3 bucket %q: bucket: created", r.bucket), "versioning: created"},
		[]string{fmt.Sprintf("s3 bucket %q: bucket: already existed", r.bucket), "versioning: already existed"})
	st := deployQuickstart(t, p)
	r.s3Layout(t, 1, st.Lineage)

	finish := holdDeploy(t, p)
	lock := heldLock(t, p)
	eventually(t, 10*time.Second, "a heartbeat to advance lastHeartbeat", func() bool { return heldLock(t, p).LastHeartbeat > lock.LastHeartbeat })
	rec, name, ok := r.s3LockObject(t, "stack:shop:env:dev")
	if !ok {
		t.Fatalf("no lock record for stack:shop:env:dev under s3://%s/locks/ while a deploy holds it", r.bucket)
	}
	if rec["lockId"] != lock.LockID || rec["lockedBy"] != lock.LockedBy || rec["expiresAt"] == nil || rec["fence"] == nil {
		t.Errorf("s3://%s/%s = %v, want the record of lock %s with expiresAt and fence", r.bucket, name, rec, lock.LockID)
	}
	if md, _ := rec["metadata"].(map[string]any); md["operation"] != "deploy" {
		t.Errorf("s3 lock record metadata = %v, want operation deploy", rec["metadata"])
	}
	if res := finish(); res.code != 0 {
		t.Fatalf("held deploy: %s", res)
	}
	if rec, name, ok := r.s3LockObject(t, "stack:shop:env:dev"); ok {
		t.Errorf("a live lock record is left at s3://%s/%s after the deploy: %v", r.bucket, name, rec)
	}
	r.s3Layout(t, 2, st.Lineage)
}

func TestQuickstartOnRedisLocks(t *testing.T) {
	r := newRemote(t, "redis", "file", "", false)
	p := r.quickstart(t) // state file://.deployer in the project
	p.mustRun(0, "backend", "init")
	st := deployQuickstart(t, p)
	if fs := p.state("shop", "dev"); fs.Serial != 1 || fs.Lineage != st.Lineage {
		t.Errorf(".deployer/stacks/shop/dev/state.json: serial %d lineage %s", fs.Serial, fs.Lineage)
	}
	finish := holdDeploy(t, p)
	heldLock(t, p)
	if res := finish(); res.code != 0 {
		t.Fatalf("held deploy: %s", res)
	}
	if st := p.remoteState("dev"); st.Serial != 2 {
		t.Errorf("serial after the second change: %d, want 2", st.Serial)
	}
	if locks := p.locks(); len(locks) != 0 {
		t.Errorf("locks left: %+v", locks)
	}
}

func TestQuickstartOnPostgresLocksAndState(t *testing.T) {
	r := newRemote(t, "postgres", "postgres", "", false)
	p := r.quickstart(t)
	r0 := p.run("deploy", "-e", "dev", "--yes")
	if r0.code == 0 || !strings.Contains(r0.stderr, "backend init") {
		t.Errorf("deploy before `backend init` should fail naming `deployer backend init`: %s", r0)
	}
	backendInitTwice(t, p, []string{"applied migration"}, []string{"schema already up to date"})
	deployQuickstart(t, p)
	finish := holdDeploy(t, p)
	heldLock(t, p)
	if res := finish(); res.code != 0 {
		t.Fatalf("held deploy: %s", res)
	}
	if st := p.remoteState("dev"); st.Serial != 2 {
		t.Errorf("serial after the second change: %d, want 2", st.Serial)
	}
	var hist []struct {
		Serial int64 `json:"serial"`
	}
	r2 := p.mustRun(0, "history", "-e", "dev", "--json")
	if err := json.Unmarshal([]byte(r2.stdout), &hist); err != nil || len(hist) != 2 || hist[0].Serial != 2 {
		t.Errorf("history should list serials 2 and 1: %v\n%s", err, r2)
	}
	if st := p.remoteState("dev", "--serial", "1"); st.Serial != 1 {
		t.Errorf("state show --serial 1 gave serial %d", st.Serial)
	}
}

// A backend that cannot be reached is one error line with the fix, no library
// log noise, exit 1, and nothing written.
func TestUnreachableBackendGivesOneClearError(t *testing.T) {
	addr := testenv.ClosedAddr(t)
	for _, c := range []struct{ env, want string }{
		{"DEPLOYER_BACKEND_LOCK=redis://" + addr, "check that Redis runs there and backend.lock is right"},
		{"DEPLOYER_BACKEND_STATE=postgres://u:secret@" + addr + "/db?connect_timeout=2", "cannot connect to PostgreSQL (check that it runs there"},
	} {
		p := newShop(t)
		p.env = append(p.env, c.env)
		r := p.mustRun(1, "deploy", "-e", "dev", "--yes")
		if !strings.Contains(r.stderr, c.want) {
			t.Errorf("%s: stderr lacks %q:\n%s", c.env, c.want, r)
		}
		if strings.Count(r.stderr, "Error:") != 1 || strings.Contains(r.stderr, "pool.go") || strings.Contains(r.stderr, "secret") {
			t.Errorf("%s: want one short error without library logs or the password:\n%s", c.env, r)
		}
		if _, err := os.Stat(filepath.Join(p.dir, "events.log")); err == nil {
			t.Errorf("%s: a component ran although the backend is unreachable", c.env)
		}
		if _, err := os.Stat(filepath.Join(p.dir, ".deployer/stacks")); err == nil {
			t.Errorf("%s: state was written although the backend is unreachable", c.env)
		}
	}
}
