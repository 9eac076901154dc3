package app

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/deployer-dev/deployer/internal/config"
	"github.com/deployer-dev/deployer/internal/deploy"
	"github.com/deployer-dev/deployer/internal/exitcode"
	"github.com/deployer-dev/deployer/internal/ghactions"
	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/policy"
)

// PolicyFlags are --policy DIR (repeatable) and, for deploy,
// --override-policy NAME (repeatable) with --reason TEXT (docs/policy.md).
type PolicyFlags struct {
	Dirs      []string
	Overrides []string
	Reason    string
	// Identify tells who asks for the overrides (OverrideIdentity); nil
	// leaves it to the use case (the lock holder's name, not verified).
	Identify func(ctx context.Context) (policy.Identity, error)
}

// identityTimeout bounds the requests that tell who overrides a policy.
const identityTimeout = 30 * time.Second

// OverrideIdentity returns who asks for --override-policy
// (docs/policy.md#overrides): under GitHub Actions the identity GitHub
// vouches for (ghactions.VouchedActor: the OIDC token's actor, or the
// run's actor read through the API), never GITHUB_ACTOR alone; elsewhere
// the user running deployer (USER@hostname), not verified.
func OverrideIdentity(getenv func(string) string) func(ctx context.Context) (policy.Identity, error) {
	return func(ctx context.Context) (policy.Identity, error) {
		if getenv("GITHUB_ACTIONS") == "true" {
			id, err := ghactions.VouchedActor(ctx, &http.Client{Timeout: identityTimeout}, getenv)
			if err != nil {
				return id, fmt.Errorf("--override-policy: who overrides cannot be verified: %w", err)
			}
			return id, nil
		}
		_, md := lockmgr.Holder(getenv)
		return policy.Identity{Login: md.User + "@" + md.Hostname, Source: "the user running deployer (USER@hostname)"}, nil
	}
}

func BindPolicyFlags(cmd *cobra.Command, p *PolicyFlags, overrides bool) {
	cmd.Flags().StringArrayVar(&p.Dirs, "policy", nil, "check the plan against the Rego policies in DIR, besides deployer.yaml's policy.paths (repeatable; docs/policy.md)")
	if overrides {
		cmd.Flags().StringArrayVar(&p.Overrides, "override-policy", nil, "deploy past the denies of the overridable policy NAME, recorded with --reason (repeatable)")
		cmd.Flags().StringVar(&p.Reason, "reason", "", "why the policies of --override-policy are overridden (recorded in the deployment and the audit log)")
	}
}

// Validate checks the flags alone: an override needs a reason.
func (p PolicyFlags) Validate() error {
	if len(p.Overrides) > 0 && p.Reason == "" {
		return &exitcode.UsageError{Msg: "--override-policy needs --reason TEXT: say why the policy is overridden"}
	}
	if p.Reason != "" && len(p.Overrides) == 0 {
		return &exitcode.UsageError{Msg: "--reason goes with --override-policy NAME"}
	}
	return nil
}

// Check is the policy check of cfg's policy.paths (relative to
// deployer.yaml's directory) and of --policy, which the use case loads and
// compiles; nil when there are none.
func (p PolicyFlags) Check(ctx context.Context, cfg *config.Config) (*deploy.PolicyCheck, error) {
	var dirs []string
	for _, d := range cfg.Policy.Paths {
		if !filepath.IsAbs(d) {
			d = filepath.Join(cfg.Dir, d)
		}
		dirs = append(dirs, d)
	}
	dirs = append(dirs, p.Dirs...)
	if len(dirs) == 0 {
		if len(p.Overrides) > 0 {
			return nil, &exitcode.UsageError{Msg: "--override-policy: no policy is configured (policy.paths in deployer.yaml, or --policy DIR)"}
		}
		return nil, nil
	}
	c := &deploy.PolicyCheck{Dirs: dirs}
	for _, name := range p.Overrides {
		c.Overrides = append(c.Overrides, policy.Override{Policy: name, Reason: p.Reason})
	}
	if len(c.Overrides) > 0 && p.Identify != nil {
		var err error
		if c.Identity, err = p.Identify(ctx); err != nil {
			return nil, err
		}
	}
	return c, nil
}
