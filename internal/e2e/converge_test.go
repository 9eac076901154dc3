//go:build unix

package e2e

// A model-based test of convergence (docs/operations.md#how-operations-combine):
// a seeded random walk of day-2 operations over a project of Command
// components, driven through the binary. The components' scripts keep
// each instance as a file under live/ and append what ran to a journal; a
// model in the test says what should exist and what each operation runs.
// After every step the next plan is empty (or names exactly what the
// model expects), the live instances are the model's, the journal shows
// exactly the commands expected (no create of an instance that exists, no
// delete of a protected one), the state verifies and has one history
// record per write.

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/testenv"
)

// compScript is every component's command: create makes live/ID (ID from
// the address and the deployment), update and delete act on the ID of
// its outputs, read prints the instance (or null), an import reads the
// ID given. Each appends "ACTION ADDRESS" to journal; a file
// fail/SVC_NAME makes create and update fail.
const compScript = `#!/bin/sh
a=$DEPLOYER_COMPONENT
f="fail/$(echo "$a" | tr / _)"
case "$1" in
create)
  [ -f "$f" ] && exit 1
  id="$(echo "$a" | tr / -)-$DEPLOYER_DEPLOYMENT_ID"
  echo "$a" > "live/$id"; echo "create $a" >> journal
  printf '{"id":"%s"}' "$id" > "$DEPLOYER_OUTPUTS" ;;
update)
  [ -f "$f" ] && exit 1
  h="hold/$(echo "$a" | tr / _)"
  if [ -f "$h" ]; then : > "$h.started"; while [ -f "$h" ]; do sleep 0.05; done; fi
  [ -f "live/$DEPLOYER_OUTPUT_ID" ] || { echo "update of a missing instance $DEPLOYER_OUTPUT_ID" >&2; exit 3; }
  echo "update $a" >> journal
  printf '{"id":"%s"}' "$DEPLOYER_OUTPUT_ID" > "$DEPLOYER_OUTPUTS" ;;
delete)
  rm -f "live/$DEPLOYER_OUTPUT_ID"; echo "delete $a" >> journal ;;
read)
  id=${DEPLOYER_IMPORT_ID:-$DEPLOYER_OUTPUT_ID}
  [ "$DEPLOYER_ACTION" = import ] && echo "import $a" >> journal
  if [ -f "live/$id" ]; then printf '{"id":"%s"}' "$id"; else echo null; fi ;;
esac
`

// walkComp is one component of the model.
type walkComp struct {
	v       int
	deps    []string
	protect bool
}

// walk is the model and the project it drives.
type walk struct {
	t       *testing.T
	p       *project
	rng     *rand.Rand
	backend string
	log     []string // the operations so far, for the failure report

	comps   map[string]*walkComp
	moved   [][2]string       // moved: entries, in order
	outputs map[string]string // stack output -> component address
	inst    map[string]string // address -> the live instance it manages
	orphans map[string]bool   // live instances nothing manages
	serial  int64
	next    int // names and ids handed out
}

func newWalk(t *testing.T, seed uint64, backend string, env []string) *walk {
	w := &walk{t: t, rng: rand.New(rand.NewPCG(seed, 1<<40)), backend: backend, log: []string{"init"},
		comps: map[string]*walkComp{}, outputs: map[string]string{}, inst: map[string]string{}, orphans: map[string]bool{}}
	w.p = &project{t: t, dir: t.TempDir(), env: env}
	w.p.write("comp.sh", compScript)
	for _, d := range []string{"live", "fail", "hold"} {
		if err := os.MkdirAll(filepath.Join(w.p.dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for range 12 {
		w.addComp()
	}
	w.writeYAML()
	w.deploy(nil)
	return w
}

func (w *walk) fresh(prefix string) string {
	w.next++
	return fmt.Sprintf("%s%d", prefix, w.next)
}

func (w *walk) addrs() []string { return slices.Sorted(maps.Keys(w.comps)) }

// addComp declares a new component in one of three services, depending
// on up to two existing ones; it returns its address.
func (w *walk) addComp() string {
	addr := fmt.Sprintf("s%d/%s", w.rng.IntN(3), w.fresh("c"))
	c := &walkComp{v: 1}
	existing := w.addrs()
	for range w.rng.IntN(3) {
		if len(existing) > 0 {
			d := existing[w.rng.IntN(len(existing))]
			if !slices.Contains(c.deps, d) {
				c.deps = append(c.deps, d)
			}
		}
	}
	slices.Sort(c.deps)
	w.comps[addr] = c
	return addr
}

func (w *walk) writeYAML() {
	var b strings.Builder
	fmt.Fprintf(&b, "stack: walk\n%senvironments: {dev: {}}\n", w.backend)
	if len(w.moved) > 0 {
		b.WriteString("moved:\n")
		for _, m := range w.moved {
			fmt.Fprintf(&b, "  - {from: %s, to: %s}\n", m[0], m[1])
		}
	}
	if len(w.outputs) > 0 {
		b.WriteString("outputs:\n")
		for _, name := range slices.Sorted(maps.Keys(w.outputs)) {
			fmt.Fprintf(&b, "  %s: '${%s.id}'\n", name, w.outputs[name])
		}
	}
	b.WriteString("services:\n")
	bySvc := map[string][]string{}
	for _, a := range w.addrs() {
		svc, _, _ := strings.Cut(a, "/")
		bySvc[svc] = append(bySvc[svc], a)
	}
	for _, svc := range slices.Sorted(maps.Keys(bySvc)) {
		fmt.Fprintf(&b, "  %s:\n    components:\n", svc)
		for _, a := range bySvc[svc] {
			c := w.comps[a]
			_, name, _ := strings.Cut(a, "/")
			fmt.Fprintf(&b, "      %s: {kind: Command, config: {v: %d}, protect: %t, depends_on: [%s], "+
				"command: {create: sh comp.sh create, update: sh comp.sh update, delete: sh comp.sh delete, read: sh comp.sh read}}\n",
				name, c.v, c.protect, strings.Join(c.deps, ", "))
		}
	}
	w.p.write("deployer.yaml", b.String())
}

// dependents are the components depending on addr directly.
func (w *walk) dependents(addr string) []string {
	var out []string
	for _, a := range w.addrs() {
		if slices.Contains(w.comps[a].deps, addr) {
			out = append(out, a)
		}
	}
	return out
}

// subtree is addr and every component depending on it, directly or not.
func (w *walk) subtree(addr string) []string {
	seen := map[string]bool{addr: true}
	for changed := true; changed; {
		changed = false
		for _, a := range w.addrs() {
			if seen[a] {
				continue
			}
			for _, d := range w.comps[a].deps {
				if seen[d] {
					seen[a], changed = true, true
					break
				}
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

func (w *walk) pick() string {
	a := w.addrs()
	return a[w.rng.IntN(len(a))]
}

// walkFailure is how a step the model disagrees with stops the walk
// (recovered by runWalk).
type walkFailure struct{ msg string }

// fail stops the walk at the current step.
func (w *walk) fail(format string, args ...any) {
	panic(walkFailure{msg: fmt.Sprintf("step %d (%s): %s", len(w.log)-1, w.log[len(w.log)-1], fmt.Sprintf(format, args...))})
}

// run runs deployer and fails the walk unless it exits with code.
func (w *walk) run(code int, args ...string) result {
	w.t.Helper()
	r := w.p.run(args...)
	if r.code != code {
		w.fail("deployer %s: want exit %d, got %s", strings.Join(args, " "), code, r)
	}
	return r
}

// takeJournal returns the journal's lines since the last call (reads
// left out), sorted, and empties it.
func (w *walk) takeJournal() []string {
	path := filepath.Join(w.p.dir, "journal")
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		w.fail("%v", err)
	}
	_ = os.Remove(path)
	var out []string
	for l := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return out
}

func (w *walk) expectJournal(want []string) {
	w.t.Helper()
	got := w.takeJournal()
	sort.Strings(want)
	if !slices.Equal(got, want) {
		w.fail("the commands that ran are not the model's:\n got  %q\n want %q", got, want)
	}
}

// deploy runs a whole deploy expecting the changes of creates (new
// instances, with their direct dependents updated for their new input)
// and updates.
func (w *walk) deploy(updates []string, creates ...string) {
	w.t.Helper()
	w.run(0, "deploy", "-e", "dev", "--yes")
	w.serial++
	w.expectJournal(w.created(updates, creates))
}

// created records new instances for creates and returns the journal
// expected: a create for each, an update of each direct dependent not
// created itself (its input, the id, changed), and updates.
func (w *walk) created(updates, creates []string) []string {
	if len(w.inst) == 0 {
		creates = w.addrs()
	}
	var want []string
	upd := map[string]bool{}
	for _, u := range updates {
		upd[u] = true
	}
	for _, c := range creates {
		want = append(want, "create "+c)
		for _, d := range w.dependents(c) {
			if !slices.Contains(creates, d) {
				upd[d] = true
			}
		}
	}
	for u := range upd {
		want = append(want, "update "+u)
	}
	for _, c := range creates {
		w.inst[c] = "?" // read back in check
	}
	return want
}

// planChanges are the addresses a plan would act on, as "ACTION ADDR".
func (w *walk) planChanges() []string {
	r := w.p.run("plan", "-e", "dev", "--json", "--detailed-exitcode")
	if r.code != 0 && r.code != 2 {
		w.fail("plan: %s", r)
	}
	var out []string
	for _, s := range parsePlan(w.t, r).Steps {
		if s.Action != "no-op" {
			out = append(out, s.Action+" "+s.Address)
		}
	}
	sort.Strings(out)
	if len(out) > 0 && r.code != 2 {
		w.fail("plan --detailed-exitcode exit %d disagrees with its steps %v", r.code, out)
	}
	return out
}

func (w *walk) expectPlan(want ...string) {
	w.t.Helper()
	sort.Strings(want)
	if got := w.planChanges(); !slices.Equal(got, want) {
		w.fail("the plan is not what the model expects:\n got  %q\n want %q", got, want)
	}
}

// check compares the project with the model: an empty plan, the live
// instances, the state (verified by state show) with its serial, its
// newest history record and the stack outputs.
func (w *walk) check(lastType string) {
	w.t.Helper()
	if r := w.p.run("plan", "-e", "dev", "--detailed-exitcode"); r.code != 0 {
		w.fail("the plan after the step should be empty: %s", r)
	}
	var st struct {
		Serial    int64 `json:"serial"`
		Resources map[string]struct {
			Outputs   map[string]any `json:"outputs"`
			Lifecycle struct {
				Protect bool `json:"protect"`
			} `json:"lifecycle"`
		} `json:"resources"`
		Outputs map[string]any `json:"outputs"`
		History []struct {
			Serial int64  `json:"serial"`
			Type   string `json:"type"`
		} `json:"deployment_history"`
	}
	r := w.run(0, "state", "show", "-e", "dev", "--json")
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		w.fail("state show --json: %v", err)
	}
	if st.Serial != w.serial {
		w.fail("the state is at serial %d, the model counted %d writes", st.Serial, w.serial)
	}
	if len(st.History) == 0 || st.History[0].Serial != st.Serial || (lastType != "" && st.History[0].Type != lastType) {
		w.fail("the newest history record should be serial %d of type %s: %+v", st.Serial, lastType, st.History[:min(2, len(st.History))])
	}
	if got, want := slices.Sorted(maps.Keys(st.Resources)), w.addrs(); !slices.Equal(got, want) {
		w.fail("the state holds %v, the model %v", got, want)
	}
	want := map[string]bool{}
	for a, res := range st.Resources {
		id, _ := res.Outputs["id"].(string)
		if w.inst[a] == "?" {
			w.inst[a] = id
		}
		if id != w.inst[a] {
			w.fail("%s manages %q, the model says %q", a, id, w.inst[a])
		}
		if res.Lifecycle.Protect != w.comps[a].protect {
			w.fail("%s: protect %t in the state, %t in the model", a, res.Lifecycle.Protect, w.comps[a].protect)
		}
		want[id] = true
	}
	maps.Copy(want, w.orphans)
	entries, err := os.ReadDir(filepath.Join(w.p.dir, "live"))
	if err != nil {
		w.fail("%v", err)
	}
	got := map[string]bool{}
	for _, e := range entries {
		got[e.Name()] = true
	}
	if !maps.Equal(got, want) {
		w.fail("live instances %v, the model's %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
	wantOut := map[string]any{}
	for name, a := range w.outputs {
		wantOut[name] = w.inst[a]
	}
	if !maps.Equal(st.Outputs, wantOut) {
		w.fail("stack outputs %v, the model's %v", st.Outputs, wantOut)
	}
}

// dropMovesTo removes the moved: entries whose chain ends at addr (the
// component is removed or renamed without one: they are applied).
func (w *walk) dropMovesTo(addr string) {
	end := func(a string) string {
		for seen := 0; seen <= len(w.moved); seen++ {
			i := slices.IndexFunc(w.moved, func(m [2]string) bool { return m[0] == a })
			if i < 0 {
				return a
			}
			a = w.moved[i][1]
		}
		return a
	}
	w.moved = slices.DeleteFunc(w.moved, func(m [2]string) bool { return end(m[1]) == addr })
}

// rename gives addr a new name in its service: dependents and outputs follow.
func (w *walk) rename(addr string) string {
	svc, _, _ := strings.Cut(addr, "/")
	to := svc + "/" + w.fresh("c")
	w.comps[to] = w.comps[addr]
	delete(w.comps, addr)
	for _, c := range w.comps {
		for i, d := range c.deps {
			if d == addr {
				c.deps[i] = to
			}
		}
		slices.Sort(c.deps)
	}
	for n, a := range w.outputs {
		if a == addr {
			w.outputs[n] = to
		}
	}
	w.inst[to] = w.inst[addr]
	delete(w.inst, addr)
	return to
}

// op is one operation of the walk: it acts through the binary and
// returns the history type of the last record it wrote ("" when it wrote
// none and the model's serial says so).
type op struct {
	name string
	do   func(w *walk) string
}

var walkOps = []op{
	{"edit", func(w *walk) string {
		a := w.pick()
		w.comps[a].v++
		w.writeYAML()
		w.deploy([]string{a})
		return "deploy"
	}},
	{"add", func(w *walk) string {
		a := w.addComp()
		w.writeYAML()
		w.deploy(nil, a)
		return "deploy"
	}},
	{"remove", func(w *walk) string {
		var leaves []string
		for _, a := range w.addrs() {
			if len(w.dependents(a)) == 0 {
				leaves = append(leaves, a)
			}
		}
		if len(leaves) == 0 || len(w.comps) < 6 {
			return ""
		}
		a := leaves[w.rng.IntN(len(leaves))]
		if w.comps[a].protect {
			saved, outs, moved := w.comps[a], maps.Clone(w.outputs), slices.Clone(w.moved)
			delete(w.comps, a)
			maps.DeleteFunc(w.outputs, func(_, o string) bool { return o == a })
			w.dropMovesTo(a)
			w.writeYAML()
			if r := w.run(6, "deploy", "-e", "dev", "--yes"); !strings.Contains(r.stderr, a) {
				w.fail("the refusal should name %s: %s", a, r)
			}
			w.expectJournal(nil)
			w.comps[a], w.outputs, w.moved = saved, outs, moved
			w.writeYAML()
			return ""
		}
		delete(w.comps, a)
		for n, o := range w.outputs {
			if o == a {
				delete(w.outputs, n)
			}
		}
		w.dropMovesTo(a)
		delete(w.inst, a)
		w.writeYAML()
		w.run(0, "deploy", "-e", "dev", "--yes")
		w.serial++
		w.expectJournal([]string{"delete " + a})
		return "deploy"
	}},
	{"rename-moved", func(w *walk) string {
		// Sometimes with an edit of the renamed component in the same deploy.
		from := w.pick()
		to := w.rename(from)
		w.moved = append(w.moved, [2]string{from, to})
		var upd []string
		if w.rng.IntN(2) == 0 {
			w.comps[to].v++
			upd = append(upd, to)
		}
		w.writeYAML()
		w.deploy(upd)
		return "deploy"
	}},
	{"state-mv", func(w *walk) string {
		from := w.pick()
		w.dropMovesTo(from)
		to := w.rename(from)
		w.writeYAML()
		w.run(0, "state", "mv", "-e", "dev", from, to)
		w.serial++
		w.expectJournal(nil)
		return "state-mv"
	}},
	{"protect", func(w *walk) string {
		a := w.pick()
		w.comps[a].protect = !w.comps[a].protect
		w.writeYAML()
		w.deploy(nil)
		return "deploy"
	}},
	{"rm-reimport", func(w *walk) string {
		a := w.pick()
		id := w.inst[a]
		w.run(0, "state", "rm", "-e", "dev", a, "--yes")
		w.serial++
		w.expectJournal(nil)
		w.expectPlan(append([]string{"create " + a}, w.reevaluated(a)...)...)
		w.run(0, "import", a, id, "-e", "dev", "--yes")
		w.serial++
		w.expectJournal([]string{"import " + a})
		return "import"
	}},
	{"import-outside", func(w *walk) string {
		a := w.addComp()
		id := w.fresh("ext-")
		w.p.write(filepath.Join("live", id), a+"\n")
		w.writeYAML()
		w.run(0, "import", a, id, "-e", "dev", "--yes")
		w.serial++
		w.inst[a] = id
		w.expectJournal([]string{"import " + a})
		return "import"
	}},
	{"refresh-only", func(w *walk) string {
		a := w.pick()
		if err := os.Remove(filepath.Join(w.p.dir, "live", w.inst[a])); err != nil {
			w.fail("%v", err)
		}
		w.run(0, "deploy", "-e", "dev", "--refresh-only", "--yes")
		w.serial++
		w.expectJournal(nil)
		w.expectPlan(append([]string{"create " + a}, w.reevaluated(a)...)...)
		w.deploy(nil, a)
		return "deploy"
	}},
	{"outputs", func(w *walk) string {
		if len(w.outputs) > 0 && w.rng.IntN(2) == 0 {
			names := slices.Sorted(maps.Keys(w.outputs))
			delete(w.outputs, names[w.rng.IntN(len(names))])
		} else {
			w.outputs[w.fresh("out_")] = w.pick()
		}
		w.writeYAML()
		w.deploy(nil)
		return "deploy"
	}},
	{"targeted", func(w *walk) string {
		a, b := w.pick(), w.pick()
		if a == b {
			return ""
		}
		w.comps[a].v++
		w.comps[b].v++
		w.writeYAML()
		w.run(0, "deploy", "-e", "dev", "--yes", "--component", a)
		w.serial++
		w.expectJournal([]string{"update " + a})
		w.expectPlan("update " + b)
		w.run(0, "deploy", "-e", "dev", "--yes", "--exclude", a)
		w.serial++
		w.expectJournal([]string{"update " + b})
		return "deploy"
	}},
	{"destroy-subtree", func(w *walk) string {
		a := w.pick()
		sub := w.subtree(a)
		protected := slices.ContainsFunc(sub, func(x string) bool { return w.comps[x].protect })
		if protected {
			w.run(6, "destroy", "-e", "dev", "--yes", "--component", a, "--with-dependents")
			w.expectJournal(nil)
			return ""
		}
		w.run(0, "destroy", "-e", "dev", "--yes", "--component", a, "--with-dependents")
		w.serial++
		var want, creates []string
		for _, x := range sub {
			want = append(want, "delete "+x)
			creates = append(creates, "create "+x)
			delete(w.inst, x)
		}
		w.expectJournal(want)
		w.expectPlan(creates...)
		w.deploy(nil, sub...)
		return "deploy"
	}},
	{"replace", func(w *walk) string {
		// deploy --replace: a delete and a create, its direct dependents
		// updated for the new id; a protected one is refused.
		a := w.pick()
		if w.comps[a].protect {
			w.run(6, "deploy", "-e", "dev", "--yes", "--replace", a)
			w.expectJournal(nil)
			return ""
		}
		w.run(0, "deploy", "-e", "dev", "--yes", "--replace", a)
		w.serial++
		want := w.created(nil, []string{a})
		w.expectJournal(append(want, "delete "+a))
		return "deploy"
	}},
	{"saved-plan", func(w *walk) string {
		a := w.pick()
		w.comps[a].v++
		w.writeYAML()
		w.run(2, "plan", "-e", "dev", "--out", "p.plan", "--detailed-exitcode")
		w.run(0, "deploy", "--plan", "p.plan", "--yes")
		w.serial++
		w.expectJournal([]string{"update " + a})
		return "deploy"
	}},
	{"interrupt", func(w *walk) string {
		// SIGINT while a's update runs: recorded as cancelled, a kept
		// as it was, the next plan updates it again.
		a := w.pick()
		hold := filepath.Join("hold", strings.ReplaceAll(a, "/", "_"))
		w.p.write(hold, "")
		w.comps[a].v++
		w.writeYAML()
		d := w.p.start("deploy", "-e", "dev", "--yes")
		eventually(w.t, 60*time.Second, a+"'s update to start", func() bool {
			_, err := os.Stat(filepath.Join(w.p.dir, hold+".started"))
			return err == nil
		})
		if err := syscall.Kill(d.cmd.Process.Pid, syscall.SIGINT); err != nil {
			w.fail("%v", err)
		}
		if r := d.wait(w.t, 60*time.Second); r.code != 130 {
			w.fail("an interrupted deploy exits 130: %s", r)
		}
		w.serial++
		for _, f := range []string{hold, hold + ".started"} {
			_ = os.Remove(filepath.Join(w.p.dir, f))
		}
		w.expectJournal(nil)
		w.expectPlan("update " + a)
		w.deploy([]string{a})
		return "deploy"
	}},
	{"fail-retry", func(w *walk) string {
		a := w.pick()
		flag := filepath.Join("fail", strings.ReplaceAll(a, "/", "_"))
		w.p.write(flag, "")
		w.comps[a].v++
		w.writeYAML()
		w.run(1, "deploy", "-e", "dev", "--yes")
		w.serial++
		w.expectJournal(nil)
		w.expectPlan("update " + a)
		if err := os.Remove(filepath.Join(w.p.dir, flag)); err != nil {
			w.fail("%v", err)
		}
		w.deploy([]string{a})
		return "deploy"
	}},
}

// reevaluated are the plan's lines for addr's direct dependents when addr
// is not in the state: updates, as their recorded input from it is gone.
func (w *walk) reevaluated(addr string) []string {
	var out []string
	for _, d := range w.dependents(addr) {
		out = append(out, "update "+d)
	}
	return out
}

// walkSteps are the operations (indices into walkOps) of a walk of n
// steps of seed.
func walkSteps(seed uint64, n int) []int {
	rng := rand.New(rand.NewPCG(seed, 0))
	var from []int // DEPLOYER_WALK_OPS=edit,add draws from those only
	for i, o := range walkOps {
		if v := os.Getenv("DEPLOYER_WALK_OPS"); v == "" || slices.Contains(strings.Split(v, ","), o.name) {
			from = append(from, i)
		}
	}
	out := make([]int, n)
	for i := range out {
		out[i] = from[rng.IntN(len(from))]
	}
	return out
}

// walkBackend makes the backend block and environment of one walk.
type walkBackend func(t *testing.T) (yaml string, env []string)

// runWalk runs the operations steps of seed (step i draws from a
// generator of its own, seeded by seed and i, so a walk without some steps
// still does the others alike) on a new project; it returns the index in
// steps of the step the model disagreed with (-1: none) and why.
func runWalk(t *testing.T, seed uint64, steps []int, idx []int, mk walkBackend) (failed int, msg string) {
	backend, env := mk(t)
	failed = -1
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(walkFailure)
			if !ok {
				panic(r)
			}
			msg = f.msg
		}
	}()
	w := newWalk(t, seed, backend, env)
	w.check("deploy")
	for i, o := range steps {
		failed = i
		w.rng = rand.New(rand.NewPCG(seed, uint64(idx[i])+1))
		w.log = append(w.log, fmt.Sprintf("%d:%s", idx[i], walkOps[o].name))
		typ := walkOps[o].do(w)
		w.check(typ)
	}
	failed = len(steps)
	hist := w.run(0, "history", "-e", "dev", "--json", "--limit", "0")
	var recs []json.RawMessage
	if err := json.Unmarshal([]byte(hist.stdout), &recs); err != nil {
		w.fail("history --json: %v", err)
	}
	if int64(len(recs)) != w.serial {
		w.fail("history has %d records for %d writes", len(recs), w.serial)
	}
	return -1, ""
}

// walkSeed runs n steps of seed and, when the model disagrees, shrinks
// the failing walk (drops each earlier step in turn while it still fails,
// at most budget re-runs) and fails t with the seed and the steps left.
func walkSeed(t *testing.T, seed uint64, n int, mk walkBackend, budget int) {
	t.Helper()
	steps := walkSteps(seed, n)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	at, msg := runWalk(t, seed, steps, idx, mk)
	if at < 0 {
		return
	}
	if at < len(steps) {
		steps, idx = steps[:at+1], idx[:at+1]
	}
	for i := 0; i < len(steps)-1 && budget > 0; i++ {
		budget--
		s2 := slices.Delete(slices.Clone(steps), i, i+1)
		i2 := slices.Delete(slices.Clone(idx), i, i+1)
		if at2, msg2 := runWalk(t, seed, s2, i2, mk); at2 >= 0 {
			steps, idx, msg = s2, i2, msg2
			if at2 < len(s2) {
				steps, idx = steps[:at2+1], idx[:at2+1]
			}
			i--
		}
	}
	var names []string
	for i, o := range steps {
		names = append(names, fmt.Sprintf("%d:%s", idx[i], walkOps[o].name))
	}
	t.Fatalf("convergence walk failed: seed %d, %d steps; shortest failing walk found (%d steps; STEP:OP, STEP the index in the full walk):\n  %s\n%s\n"+
		"re-run: make soak SEED=%d STEPS=%d", seed, n, len(steps), strings.Join(names, "\n  "), msg, seed, n)
}

// fileWalk is the file backends, in the walk's own directories.
func fileWalk(t *testing.T) (string, []string) {
	r := newRemote(t, "file", "file", "", true)
	return r.backendYAML("1m", "10s", "30s"), r.env
}

// s3Walk is S3 state with DynamoDB locks (skipped without the test servers).
func s3Walk(t *testing.T) (string, []string) {
	r := newRemote(t, "dynamodb", "s3", "", true)
	return r.backendYAML("1m", "10s", "30s"), r.env
}

// walkSeeds are the seeds go test runs; DEPLOYER_WALK_SEED (a number, or
// FROM-TO) and DEPLOYER_WALK_STEPS pick others (make soak).
func walkSeeds(t *testing.T, seeds []uint64, steps int) ([]uint64, int) {
	if v := os.Getenv("DEPLOYER_WALK_STEPS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("DEPLOYER_WALK_STEPS=%q: %v", v, err)
		}
		steps = n
	}
	if v := os.Getenv("DEPLOYER_WALK_SEED"); v != "" {
		from, to, _ := strings.Cut(v, "-")
		a, err1 := strconv.ParseUint(from, 10, 64)
		b, err2 := strconv.ParseUint(cmpOr(to, from), 10, 64)
		if err1 != nil || err2 != nil || b < a {
			t.Fatalf("DEPLOYER_WALK_SEED=%q: want N or FROM-TO", v)
		}
		seeds = nil
		for s := a; s <= b; s++ {
			seeds = append(seeds, s)
		}
	}
	return seeds, steps
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// TestConvergenceWalk: seeded random walks of day-2 operations on the
// file backends converge after every step (see the top of this file).
func TestConvergenceWalk(t *testing.T) {
	seeds, steps := walkSeeds(t, []uint64{1, 2}, 60)
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			// Each seed walks its own project and backends: the seeds run
			// side by side (most of a walk waits on deployer processes).
			t.Parallel()
			walkSeed(t, seed, steps, fileWalk, 40)
		})
	}
}

// TestConvergenceWalkOnS3: the same on S3 state with DynamoDB locks.
func TestConvergenceWalkOnS3(t *testing.T) {
	testenv.Require(t, testenv.S3Endpoint, "MinIO")
	testenv.Require(t, testenv.DynamoDBEndpoint, "dynalite")
	seeds, steps := walkSeeds(t, []uint64{1}, 40)
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			walkSeed(t, seed, steps, s3Walk, 10)
		})
	}
}
