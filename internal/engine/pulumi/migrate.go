package pulumi

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/auto"
	"github.com/pulumi/pulumi/sdk/v3/go/common/apitype"

	"github.com/deployer-dev/deployer/internal/engine"
	"github.com/deployer-dev/deployer/internal/plan"
)

// needsUnprotect reports whether the up of steps and keep must first clear
// Pulumi's protect from the wrappers of the previous layout
// (docs/pulumi.md#resource-layout): the up drops the wrappers, and Pulumi
// refuses to drop a protected one. A wrapper was protected when its
// component was, as deployer's state records it.
func needsUnprotect(keep, steps []plan.Step) bool {
	for _, s := range append(append([]plan.Step(nil), keep...), steps...) {
		if s.Prior != nil && s.Prior.Lifecycle.Protect && wrapperOf(s) != "" {
			return true
		}
	}
	return false
}

// unprotectIfNeeded clears protect from the wrappers of the previous
// layout before the up of steps, when deployer's state says one may be
// protected (needsUnprotect) and Pulumi's state holds one: read from the
// checkpoint file of a file:// backend, else from an export.
func (e *Engine) unprotectIfNeeded(ctx context.Context, st auto.Stack, in engine.Inputs, steps []plan.Step) error {
	if !needsUnprotect(in.Keep, steps) {
		return nil
	}
	if has, known := localProtectedWrappers(BackendFor(e.opts.BackendURL, in.Stack, in.Env), in.Stack, in.Env); known && !has {
		return nil
	}
	return unprotectWrappers(ctx, st)
}

// localProtectedWrappers reads the checkpoint of a file:// backend
// (.pulumi/stacks/{project}/{env}.json or .json.gz) and reports whether
// it holds a protected wrapper; known is false when it cannot tell.
func localProtectedWrappers(backend, project, env string) (has, known bool) {
	u, err := url.Parse(backend)
	if err != nil || u.Scheme != "file" {
		return false, false
	}
	base := filepath.Join(u.Path, ".pulumi", "stacks", project, env+".json")
	data, err := os.ReadFile(base)
	if err != nil {
		gz, gerr := os.ReadFile(base + ".gz")
		if gerr != nil {
			return false, false
		}
		zr, gerr := gzip.NewReader(bytes.NewReader(gz))
		if gerr != nil {
			return false, false
		}
		if data, gerr = io.ReadAll(zr); gerr != nil {
			return false, false
		}
	}
	var cp struct {
		Checkpoint struct {
			Latest struct {
				Resources []struct {
					Type    string `json:"type"`
					Protect bool   `json:"protect"`
				} `json:"resources"`
			} `json:"latest"`
		} `json:"checkpoint"`
	}
	if err := json.Unmarshal(data, &cp); err != nil {
		return false, false
	}
	for _, res := range cp.Checkpoint.Latest.Resources {
		if strings.HasPrefix(res.Type, ComponentType) && res.Protect {
			return true, true
		}
	}
	return false, true
}

// unprotectWrappers clears protect from every wrapper of the previous
// layout in Pulumi's state of st (pulumi stack export, then import), once,
// at the up that drops them. The resources under them keep their own
// protect, which the up sets again from deployer.yaml.
func unprotectWrappers(ctx context.Context, st auto.Stack) error {
	dep, err := st.Export(ctx)
	if err != nil {
		return fmt.Errorf("read Pulumi's state to move it off the previous layout: %w", shorten(err))
	}
	var d map[string]any
	if err := json.Unmarshal(dep.Deployment, &d); err != nil {
		return fmt.Errorf("read exported Pulumi deployment: %w", err)
	}
	changed := false
	rs, _ := d["resources"].([]any)
	for _, x := range rs {
		r, _ := x.(map[string]any)
		if t, _ := r["type"].(string); isWrapper(snapResource{Type: t}) && r["protect"] == true {
			r["protect"], changed = false, true
		}
	}
	if !changed {
		return nil
	}
	raw, err := json.Marshal(d)
	if err != nil {
		return err
	}
	if err := st.Import(ctx, apitype.UntypedDeployment{Version: dep.Version, Deployment: raw}); err != nil {
		return fmt.Errorf("clear protect of the previous layout's component resources in Pulumi's state: %w", shorten(err))
	}
	return nil
}
