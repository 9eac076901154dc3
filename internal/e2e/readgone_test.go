//go:build unix

package e2e

import (
	"strings"
	"testing"
)

// readGoneYAML: app/web's create makes live/web.json, its update is told
// (by the file "update-removes") to remove it, and read prints it or null.
const readGoneYAML = `stack: shop
environments:
  dev: {}
services:
  app:
    components:
      web:
        kind: Command
        config: {replicas: 2}
        command: {create: ./create.sh, update: ./update.sh, delete: rm -f live/web.json, read: ./read.sh}
`

// A read that prints null right after an update means the thing is gone:
// the deploy fails saying so, the state drops the component, and the next
// deploy creates it (not a failure that repeats for ever). A read that
// prints nothing gets an error that says what to print.
func TestReadPrintingNullAfterAnUpdateRecreatesTheComponent(t *testing.T) {
	p := newProject(t, readGoneYAML)
	p.write("create.sh", "#!/bin/sh\nmkdir -p live && echo '{\"replicas\": 2}' > live/web.json\n")
	p.write("update.sh", "#!/bin/sh\nif [ -f update-removes ]; then rm -f live/web.json; fi\n")
	p.write("read.sh", "#!/bin/sh\nif [ -f read-empty ]; then exit 0; fi\ncat live/web.json 2>/dev/null || echo null\n")
	p.mustRun(0, "deploy", "-e", "dev", "--yes")

	p.write("update-removes", "")
	p.write("deployer.yaml", strings.Replace(readGoneYAML, "replicas: 2}", "replicas: 3}", 1))
	r := p.mustRun(1, "deploy", "-e", "dev", "--yes")
	if !strings.Contains(r.stderr, "printed null right after the update: the thing is gone, so the state drops the component and the next deploy creates it") {
		t.Fatalf("deploy whose read printed null after the update:\n%s", r)
	}
	if _, ok := p.state("shop", "dev").Resources["app/web"]; ok {
		t.Fatal("the state still holds app/web, which its read says is gone")
	}
	if r := p.mustRun(0, "plan", "-e", "dev"); !strings.Contains(r.stdout, "+ web (Command) create") {
		t.Fatalf("plan after the gone read: want web created again:\n%s", r)
	}
	r = p.mustRun(0, "deploy", "-e", "dev", "--yes")
	if st := p.state("shop", "dev").Resources["app/web"]; st.Status != "ready" || !strings.Contains(string(p.read("live/web.json")), "replicas") {
		t.Fatalf("the next deploy should create web again: %+v\n%s", st, r)
	}

	// A read that prints nothing says what to print.
	p.write("read-empty", "")
	p.write("deployer.yaml", readGoneYAML)
	r = p.mustRun(1, "deploy", "-e", "dev", "--yes")
	if !strings.Contains(r.stderr, "printed nothing right after the update: print one JSON object of the live state, or null when the thing is gone, fix command.read and deploy again") {
		t.Fatalf("deploy whose read printed nothing:\n%s", r)
	}
}
